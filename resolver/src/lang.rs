//! The reader's language preference (Accept-Language, RFC 9110 §12.5.4), kept to the
//! resolver (Table 8.6: never sent to Archives): which translation to choose for a bare
//! `+`, and whether pages are in Portuguese or English.

use ibi::relation::Lang;

pub use ibi::negotiate::{preferences, PageLang};

/// How well a language suits the reader: the place of the first preference it answers,
/// and how closely: the tag itself, then the language alone (`pt` for `pt-BR`), then the
/// language with another country (`pt-PT` for `pt-BR` or `pt`). Lower is better; `None`:
/// none of the reader's languages. The best a language can be is [`Rank::BEST`], the
/// reader's first preference exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    preference: usize,
    closeness: u8,
}

impl Rank {
    pub const BEST: Rank = Rank {
        preference: 0,
        closeness: 0,
    };
}

/// `lang`'s [`Rank`] among the reader's preferences.
pub fn rank(prefs: &[Lang], lang: &Lang) -> Option<Rank> {
    prefs.iter().enumerate().find_map(|(preference, p)| {
        let closeness = if p == lang {
            0
        } else if !p.same_language(lang) {
            return None;
        } else if lang.country().is_none() {
            1
        } else {
            2
        };
        Some(Rank {
            preference,
            closeness,
        })
    })
}

/// The texts of the resolver's pages, each in Portuguese and in English: `{name}` in a
/// text stands for a value ([`Text::fill`]), given already escaped as HTML; the texts
/// themselves are HTML.
macro_rules! texts {
    ($($(#[$doc:meta])* $name:ident: $pt:literal, $en:literal;)*) => {
        /// One text of a page ([`Text::get`] gives it in a language).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Text {
            $($(#[$doc])* $name,)*
        }

        impl Text {
            /// Every text, in the order of the table.
            pub const ALL: &'static [Text] = &[$(Text::$name,)*];

            /// The text in Portuguese.
            pub fn pt(self) -> &'static str {
                match self {
                    $(Text::$name => $pt,)*
                }
            }

            /// The text in English.
            pub fn en(self) -> &'static str {
                match self {
                    $(Text::$name => $en,)*
                }
            }
        }
    };
}

texts! {
    // The home page.
    HomeTitle: "Resolvedor de IBI", "IBI resolver";
    // Who runs the resolver (`[site]` of resolver.toml), in every page's header and footer.
    SiteRunBy: "mantido por {name}", "run by {name}";
    SiteFooter: "Este resolvedor é mantido por {name}.", "This resolver is run by {name}.";
    SiteContact: "Contato: {contact}", "Contact: {contact}";
    HomeIntro:
        "Este é um resolvedor de IBI: acrescente um IBI a este endereço, <code>{publicurl}/</code>, para chegar ao item; acrescente <code>?noredirect</code> para ver a resolução sem segui-la.",
        "This is an IBI resolver: add an IBI to this address, <code>{publicurl}/</code>, to reach the item; add <code>?noredirect</code> to see the resolution without following it.";
    /// An item this resolver has resolved, as an example.
    HomeExample: "Por exemplo: <a href=\"{url}\">{url}</a>", "For example: <a href=\"{url}\">{url}</a>";
    ArchivesIncludedZero: "Nenhum Arquivo incluído", "No Archive included";
    ArchivesIncludedOne: "1 Arquivo incluído", "1 Archive included";
    ArchivesIncludedMany: "{n} Arquivos incluídos", "{n} Archives included";
    ResolverService: "Serviço do resolvedor: <code>{service}</code>.", "Resolver service: <code>{service}</code>.";
    // The home page's form, and what it answers.
    FormLabel: "IBI ou URL persistente", "IBI or persistent URL";
    FormButton: "Resolver", "Resolve";
    FormRefusedTitle: "IBI inválido", "Invalid IBI";
    FormRefusedIntro: "O que foi digitado não é um IBI:", "What was typed is not an IBI:";
    FormEmpty: "Nenhum IBI foi digitado.", "No IBI was typed.";
    SeeOtherTitle: "URL persistente", "Persistent URL";
    // 503 and 429 of the resolver's own bounds.
    OverloadedTitle: "Resolvedor sobrecarregado", "Resolver overloaded";
    OverloadedText:
        "O resolvedor está atendendo ao maior número de pedidos que aceita. Tente de novo em instantes.",
        "The resolver is answering as many requests as it takes. Try again in a moment.";
    TooManyTitle: "Pedidos demais", "Too many requests";
    TooManyText:
        "A sua rede fez mais pedidos a este resolvedor do que ele aceita de uma rede ao mesmo tempo. Tente de novo daqui a pouco.",
        "Your network has asked this resolver more than it takes from one network at a time. Try again in a moment.";
    // 400 (and 414).
    BadRequestTitle: "URL persistente inválida", "Invalid persistent URL";
    BadRequestIntro: "O endereço pedido não é uma URL persistente:", "The address asked for is not a persistent URL:";
    TooLong:
        "O caminho e a consulta têm {length} bytes; no máximo {max} são lidos.",
        "The path and query are {length} bytes long; at most {max} are read.";
    // Why a path and query are not a persistent URL (ibi::persistent::Refusal): each value
    // quoted, as the message of the log quotes it, and not marked up, so that every 400
    // page has the same markup whatever the reason.
    /// An `Accept-Datetime` that is no HTTP-date (Memento, RFC 7089).
    BadDatetimeTitle: "Accept-Datetime inválido", "Invalid Accept-Datetime";
    BadDatetime:
        "O cabeçalho Accept-Datetime {value}, pedido de {path}, não é uma data HTTP como <code>Sun, 06 Nov 1994 08:49:37 GMT</code>.",
        "The Accept-Datetime header {value}, asked of {path}, is not an HTTP date such as <code>Sun, 06 Nov 1994 08:49:37 GMT</code>.";
    RefusedPathTooLong: "O caminho tem {length} bytes; no máximo {max} são lidos.", "The path is {length} bytes long; at most {max} are read.";
    RefusedNoLeadingSlash: "O caminho não começa com /.", "The path does not start with /.";
    RefusedEmptyPath: "Nenhum IBI: o caminho está vazio.", "No IBI: the path is empty.";
    RefusedIbiPartNotUtf8:
        "A parte {part} do IBI não é UTF-8 depois de decodificada.",
        "The IBI part {part} is not UTF-8 once decoded.";
    RefusedIbiPartSlash:
        "A parte {part} do IBI contém uma / codificada ou um caractere de controle.",
        "The IBI part {part} holds an encoded / or a control character.";
    RefusedNoIbi:
        "Nenhum IBI no início do caminho: ele não começa com um IBIp (dois segmentos) nem com um nome uniforme de repositório (quatro segmentos) válidos.",
        "No IBI at the start of the path: it starts with neither a valid IBIp (two segments) nor a valid uniform repository name (four segments).";
    RefusedRepSegments:
        "Nenhum IBI no início do caminho: um nome uniforme de repositório tem quatro segmentos ({found} encontrados).",
        "No IBI at the start of the path: a uniform repository name has four segments ({found} found).";
    RefusedOneSegment:
        "Nenhum IBI no início do caminho: {segment} é um só segmento; um IBIp tem dois, um nome uniforme de repositório, quatro.",
        "No IBI at the start of the path: {segment} is one segment; an IBIp has two, a uniform repository name four.";
    RefusedModifierNotClosed:
        "Modificador {modifier}: o \"(\" não é fechado.",
        "Modifier {modifier}: \"(\" is not closed.";
    RefusedLastEditionParameter:
        "Modificador {modifier}: ! (última edição) não tem parâmetro.",
        "Modifier {modifier}: ! (last edition) takes no parameter.";
    RefusedModifierLanguage:
        "Modificador {modifier}: {language} não é um idioma conhecido; escreva +(ll) ou +(ll-CC), como +(pt-BR).",
        "Modifier {modifier}: {language} is no known language; write +(ll) or +(ll-CC), as +(pt-BR).";
    RefusedMetadataFormat:
        "Modificador {modifier}: {format} é um formato de metadados desconhecido; o único formato é oai_dc.",
        "Modifier {modifier}: {format} is an unknown metadata format; the one format is oai_dc.";
    RefusedModifierSymbol:
        "Modificador {modifier}: {symbol} não é um modificador (!, + ou :).",
        "Modifier {modifier}: {symbol} is not a modifier (!, + or :).";
    RefusedModifierComposition:
        "O modificador {modifier} não é uma das composições da Tabela 8.2.",
        "The modifier {modifier} is not one of the compositions of Table 8.2.";
    RefusedFileDotSegment: "O caminho do arquivo tem um segmento . ou ..", "The file path has a . or .. segment.";
    RefusedFileControl:
        "O caminho do arquivo contém um caractere de controle ou uma / codificada.",
        "The file path holds a control character or an encoded /.";
    RefusedQueryNotPairs: "A consulta não é uma lista de pares.", "The query is not a list of pairs.";
    RefusedVerbListNotText: "O valor de ibiurl.verblist não é texto UTF-8.", "The value of ibiurl.verblist is not UTF-8 text.";
    RefusedModifierLanguageCode:
        "Modificador {modifier}: {code} não é um código de idioma da ISO 639-1.",
        "Modifier {modifier}: {code} is not a language code of ISO 639-1.";
    RefusedModifierCountryCode:
        "Modificador {modifier}: {code} não é um código de país da ISO 3166-1 alfa-2.",
        "Modifier {modifier}: {code} is not a country code of ISO 3166-1 alpha-2.";
    RefusedVerbLanguageCode:
        "ibiurl.verblist: em {word}, {code} não é um código de idioma da ISO 639-1.",
        "ibiurl.verblist: in {word}, {code} is not a language code of ISO 639-1.";
    RefusedVerbCountryCode:
        "ibiurl.verblist: em {word}, {code} não é um código de país da ISO 3166-1 alfa-2.",
        "ibiurl.verblist: in {word}, {code} is not a country code of ISO 3166-1 alpha-2.";
    RefusedNotAVerb:
        "ibiurl.verblist: {word} não é um verbo da Tabela 8.4 (GetLastEdition, GetTranslation[(ll[-CC])], GetMetadata[(oai_dc)], GetFileList).",
        "ibiurl.verblist: {word} is not a verb of Table 8.4 (GetLastEdition, GetTranslation[(ll[-CC])], GetMetadata[(oai_dc)], GetFileList).";
    RefusedRequiredStatus:
        "ibiurl.requireditemstatus é {value}; o seu único valor é Original.",
        "ibiurl.requireditemstatus is {value}; its one value is Original.";
    RefusedNoRelation:
        "Os verbos {verbs} não nomeiam uma relação da Tabela 9.5.",
        "The verbs {verbs} name no relation of Table 9.5.";
    // The outcomes, as pages and in the inspection view.
    FoundTitle: "Encontrado", "Found";
    RelatedAsked:
        "O último IBI pedido foi <code>{last}</code>, indicado por um Arquivo para {ibi}.",
        "The last IBI asked for was <code>{last}</code>, named by an Archive for {ibi}.";
    NotFoundTitle: "Item não encontrado", "Item not found";
    NotFoundText: "Nenhum Arquivo conhece o IBI {ibi}.", "No Archive knows the IBI {ibi}.";
    NoFileTitle: "Arquivo do item não encontrado", "File not found";
    NoMetadataTitle: "Metadados não encontrados", "Metadata not found";
    NothingFoundTitle: "Não encontrado", "Not found";
    NoSuchFile:
        "Um Arquivo tem o item {ibi}, mas não o arquivo {path}.",
        "An Archive has the item {ibi}, but not the file {path}.";
    NoMetadata:
        "Um Arquivo tem o item {ibi}, mas sem metadados.",
        "An Archive has the item {ibi}, but no metadata for it.";
    NoMetadataIn:
        "Um Arquivo tem o item {ibi}, mas não metadados em {format}.",
        "An Archive has the item {ibi}, but no metadata in {format}.";
    NothingFor:
        "Um Arquivo tem o item {ibi}, mas nada para {verbs}.",
        "An Archive has the item {ibi}, but nothing for {verbs}.";
    NoUrlGiven:
        "Um Arquivo tem o item {ibi}, mas não dá URL para ele.",
        "An Archive has the item {ibi}, but gives no URL for it.";
    UnaskedOne:
        "Este Arquivo não pôde ser perguntado; não é onde o IBI foi criado nem o Arquivo lembrado para ele:",
        "This Archive could not be asked; it is neither where the IBI was minted nor the Archive remembered for it:";
    UnaskedMany:
        "Estes Arquivos não puderam ser perguntados; nenhum é onde o IBI foi criado nem o Arquivo lembrado para ele:",
        "These Archives could not be asked; none is where the IBI was minted or the Archive remembered for it:";
    NoArchiveIncluded: "Nenhum Arquivo está incluído neste resolvedor.", "No Archive is included in this resolver.";
    UnavailableTitle: "Arquivos indisponíveis", "Archives unavailable";
    UnavailableText: "Nenhum Arquivo que respondeu conhece o IBI {ibi}.", "No Archive that answered knows the IBI {ibi}.";
    NoneAnsweredText: "Nenhum Arquivo respondeu sobre o IBI {ibi}.", "No Archive answered about the IBI {ibi}.";
    AskedOne: "1 Arquivo foi perguntado.", "1 Archive was asked.";
    AskedMany: "{n} Arquivos foram perguntados.", "{n} Archives were asked.";
    SilentOne: "Este não respondeu:", "This one did not answer:";
    SilentMany: "Estes não responderam:", "These did not answer:";
    MayHoldOne: "Ele pode ter o item. Tente de novo mais tarde.", "It may hold the item. Try again later.";
    MayHoldMany: "Um deles pode ter o item. Tente de novo mais tarde.", "One of them may hold the item. Try again later.";
    NoTranslationTitle: "Tradução inexistente", "No such translation";
    NoTranslationText:
        "O item {ibi} não tem tradução no idioma <code>{language}</code>.",
        "The item {ibi} has no translation in <code>{language}</code>.";
    DeletedTitle: "Item removido", "Item removed";
    // What a removed item keeps (its tombstone, as its Archive describes it).
    TombstoneAuthors: "Autores", "Authors";
    TombstoneReason: "Motivo da remoção", "Why it was removed";
    TombstoneCite: "Como citar", "How to cite";
    TombstonePersistent: "URL persistente: {url}", "Persistent URL: {url}";
    TombstoneLanding:
        "A página do item no Arquivo que o guarda: {url}",
        "The page of the item at the Archive that keeps it: {url}";
    DeletedText: "O item {ibi} foi removido em {date}.", "The item {ibi} was removed on {date}.";
    SuspicionTitle: "Alerta: mais de um original", "Alert: more than one original";
    SuspicionText:
        "Mais de um Arquivo afirma ter o original de {ibi}. Arquivos sob suspeita:",
        "More than one Archive claims to hold the original of {ibi}. Archives under suspicion:";
    InvestigationNeeded: "Uma investigação é necessária.", "An investigation is needed.";
    NoOriginalTitle: "Original não encontrado", "Original not found";
    NoOriginalOne:
        "Nenhum Arquivo afirma ter o original de {ibi}; todos responderam, e este tem o item:",
        "No Archive claims to hold the original of {ibi}; every Archive answered, and this one has the item:";
    NoOriginalMany:
        "Nenhum Arquivo afirma ter o original de {ibi}; todos responderam, e estes têm o item:",
        "No Archive claims to hold the original of {ibi}; every Archive answered, and these have the item:";
    NoOriginalAnsweredOne:
        "Nenhum Arquivo que respondeu afirma ter o original de {ibi}; este tem o item:",
        "No Archive that answered claims to hold the original of {ibi}; this one has the item:";
    NoOriginalAnsweredMany:
        "Nenhum Arquivo que respondeu afirma ter o original de {ibi}; estes têm o item:",
        "No Archive that answered claims to hold the original of {ibi}; these have the item:";
    SaysCopy: "uma cópia", "a copy";
    SaysNoState: "sem estado declarado", "it says no state";
    SaysState: "estado {state}", "state {state}";
    MeanwhileFound:
        "Enquanto isso, estes responderam, sem afirmar ter o original:",
        "Meanwhile these answered, claiming no original:";
    UnverifiableTitle: "Verificação do original impossível agora", "The original cannot be checked now";
    UnverifiableOne:
        "Só um Arquivo pode afirmar ter o original de {ibi}, mas este Arquivo não respondeu:",
        "Only one Archive may claim to hold the original of {ibi}, but this Archive did not answer:";
    UnverifiableMany:
        "Só um Arquivo pode afirmar ter o original de {ibi}, mas estes Arquivos não responderam:",
        "Only one Archive may claim to hold the original of {ibi}, but these Archives did not answer:";
    TryLater: "Tente de novo mais tarde.", "Try again later.";
    ChainTitle: "Itens relacionados sem fim", "Endless related items";
    ChainLong:
        "A cadeia de itens relacionados a {ibi} passa de {max} rodadas.",
        "The chain of items related to {ibi} goes on past {max} rounds.";
    ChainAgain:
        "A cadeia de itens relacionados a {ibi} volta a <code>{again}</code>, já pedido.",
        "The chain of items related to {ibi} comes back to <code>{again}</code>, asked for already.";
    ChainAgainWhy:
        "A cadeia de itens relacionados a {ibi} volta a <code>{again}</code>, já pedido: {why}.",
        "The chain of items related to {ibi} comes back to <code>{again}</code>, asked for already: {why}.";
    // The inspection view.
    InspectionTitle: "Inspeção da resolução", "Resolution inspected";
    ResolvedIn: "<code>{url}</code> — resolvida em {ms} ms", "<code>{url}</code> — resolved in {ms} ms";
    Round: "Rodada {n}", "Round {n}";
    RememberedArchive: " (Arquivo lembrado)", " (remembered Archive)";
    HomeArchive: " (Arquivo de origem do IBI)", " (home Archive of the IBI)";
    MayHoldHome: "origem do IBI: pode tê-lo", "home of the IBI: may hold it";
    MayHoldSharedHome:
        "uma das origens do IBI (um endereço de vários Arquivos): pode tê-lo",
        "one of the homes of the IBI (an address of several Archives): may hold it";
    MayHoldRemembered: "lembrado: pode tê-lo", "remembered: may hold it";
    AskedBecause: "Pedida porque {why}", "Asked because {why}";
    WhyNamed:
        "{address} ({archive}) o indicou como {pair} de {ibi}, sem a sua URL",
        "{address} ({archive}) named it as {pair} of {ibi}, without its URL";
    WhyNextEdition:
        "{address} ({archive}) o indicou como ibi.nextedition de {ibi}",
        "{address} ({archive}) named it as ibi.nextedition of {ibi}";
    WhyOwnLanguage:
        "nenhuma tradução nos idiomas do leitor: o item no seu próprio idioma",
        "no translation in the reader's languages: the item in its own language";
    ColumnArchive: "Arquivo", "Archive";
    ColumnResult: "resultado", "result";
    /// Milliseconds, the column of each Archive's time.
    ColumnMs: "ms", "ms";
    ColumnAnswer: "resposta", "answer";
    Answered: "respondeu", "answered";
    Empty: "resposta vazia", "empty";
    Failed: "falhou", "failed";
    TimedOut: "sem resposta no prazo", "timed out";
    ArchiveOverloaded: "sobrecarregado", "overloaded";
    NotSentBusy: "não enviado (o resolvedor estava ocupado)", "not sent (the resolver was busy)";
    Refused: "recusado", "refused";
    Dormant: "dormente", "dormant";
    NotAwaited: "não aguardado", "not awaited";
    Chosen: "Escolhida: <a href=\"{url}\">{url}</a> ({address})", "Chosen: <a href=\"{url}\">{url}</a> ({address})";
    OutcomeIs: "Resultado: {title}", "Outcome: {title}";
    Conflicts: "Conflitos", "Conflicts";
    ClaimsOriginal:
        "<code>{claimant}</code> afirma ter o original de <code>{ibi}</code>; {holder}",
        "<code>{claimant}</code> claims the original of <code>{ibi}</code>; {holder}";
    RememberedAt: "lembrado em <code>{holder}</code>, que o mantém", "remembered at <code>{holder}</code>, which keeps it";
    NoneRemembered: "como outro Arquivo: nenhum é lembrado", "as another Archive does: none is remembered";
    // The list of an item's editions (`/timemap/html/<IBI>`).
    EditionsTitle: "Edições do item", "Editions of the item";
    EditionsIntroOne:
        "O resolvedor encontrou uma edição do item {ibi} nos seus Arquivos.",
        "The resolver found one edition of the item {ibi} at its Archives.";
    EditionsIntroMany:
        "O resolvedor encontrou {n} edições do item {ibi} nos seus Arquivos, da mais antiga à mais recente.",
        "The resolver found {n} editions of the item {ibi} at its Archives, from the oldest to the latest.";
    EditionsAtMost:
        "Uma lista tem no máximo {max} edições: pode haver outras depois da última.",
        "A list holds at most {max} editions: there may be more after the last.";
    EditionPersistent: "URL persistente: {url}", "Persistent URL: {url}";
    EditionLocation: "Onde está agora: {url}", "Where it is now: {url}";
    EditionsOriginal:
        "O original, cuja URL persistente leva à edição de uma data pedida com Accept-Datetime: {url}",
        "The original, whose persistent URL leads to the edition of a date asked with Accept-Datetime: {url}";
    EditionsTimeMap:
        "A mesma lista para clientes Memento (TimeMap, <code>application/link-format</code>): {url}",
        "The same list for Memento clients (TimeMap, <code>application/link-format</code>): {url}";
}

impl Text {
    /// The text in `lang`.
    pub fn get(self, lang: PageLang) -> &'static str {
        match lang {
            PageLang::Pt => self.pt(),
            PageLang::En => self.en(),
        }
    }

    /// The text in `lang` with each `{name}` of `values` replaced by its value (HTML),
    /// in one pass: a value is never read for names. A name not in `values` stays as
    /// written.
    pub fn fill(self, lang: PageLang, values: &[(&str, &str)]) -> String {
        let mut out = String::new();
        let mut rest = self.get(lang);
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            rest = &rest[open..];
            let value = rest.find('}').and_then(|close| {
                let name = &rest[1..close];
                values
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (close, *v))
            });
            match value {
                Some((close, v)) => {
                    out.push_str(v);
                    rest = &rest[close + 1..];
                }
                None => {
                    out.push('{');
                    rest = &rest[1..];
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// The names of the values the text takes, in the order written.
    pub fn names(text: &str) -> Vec<&str> {
        let mut names = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            rest = &rest[open + 1..];
            if let Some(close) = rest.find('}') {
                names.push(&rest[..close]);
                rest = &rest[close + 1..];
            }
        }
        names
    }
}

/// How many of something, in `lang`: `zero` for 0, `one` for 1, `many` (its `{n}` the
/// number) for more.
pub fn count(lang: PageLang, n: usize, zero: Text, one: Text, many: Text) -> String {
    match n {
        0 => zero.get(lang).to_string(),
        1 => one.get(lang).to_string(),
        _ => many.fill(lang, &[("n", &n.to_string())]),
    }
}

/// A number of milliseconds with one decimal, as `lang` writes it: `2.5` in English,
/// `2,5` in Portuguese.
pub fn decimal(lang: PageLang, x: f64) -> String {
    let text = format!("{x:.1}");
    match lang {
        PageLang::Pt => text.replace('.', ","),
        PageLang::En => text,
    }
}

/// The months, as each language names them in a date.
const MONTHS_PT: [&str; 12] = [
    "janeiro",
    "fevereiro",
    "março",
    "abril",
    "maio",
    "junho",
    "julho",
    "agosto",
    "setembro",
    "outubro",
    "novembro",
    "dezembro",
];
const MONTHS_EN: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The instant `seconds` (POSIX, UTC) as `lang` writes a date and time: `1 de março de
/// 2022, 08:30:00 UTC` in Portuguese, `1 March 2022, 08:30:00 UTC` in English; as ISO 8601
/// outside the years chrono can write.
pub fn datetime(lang: PageLang, seconds: i64) -> String {
    use chrono::{Datelike, Timelike};
    let Some(t) = chrono::DateTime::from_timestamp(seconds, 0) else {
        return ibi::time::iso8601(seconds);
    };
    let month = t.month0() as usize;
    let time = format!("{:02}:{:02}:{:02} UTC", t.hour(), t.minute(), t.second());
    match lang {
        PageLang::Pt => format!(
            "{} de {} de {}, {time}",
            t.day(),
            MONTHS_PT[month],
            t.year()
        ),
        PageLang::En => format!("{} {} {}, {time}", t.day(), MONTHS_EN[month], t.year()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one of `available` the reader prefers: the best rank, the first of equals.
    fn choose<T: Copy>(prefs: &[Lang], available: &[(Lang, T)]) -> Option<T> {
        available
            .iter()
            .filter_map(|(l, t)| rank(prefs, l).map(|r| (r, *t)))
            .min_by_key(|(r, _)| *r)
            .map(|(_, t)| t)
    }

    #[test]
    fn choice_exact_then_same_language() {
        let available = [
            (Lang::parse("en").unwrap(), 'e'),
            (Lang::parse("pt").unwrap(), 'p'),
        ];
        let pick = |h: &str| choose(&preferences(Some(h)), &available);
        assert_eq!(pick("pt-BR,fr;q=0.8,en;q=0.5,pt;q=0.3"), Some('p'));
        assert_eq!(pick("en-GB"), Some('e'));
        assert_eq!(pick("fr,en;q=0.1"), Some('e'));
        assert_eq!(pick("fr"), None);
        let with_country = [
            (Lang::parse("pt-PT").unwrap(), 1),
            (Lang::parse("pt-BR").unwrap(), 2),
        ];
        assert_eq!(choose(&preferences(Some("pt-BR")), &with_country), Some(2));
        // Only the reader's first language, exactly, is the best there can be.
        let prefs = preferences(Some("pt-BR,pt;q=0.9"));
        assert_eq!(
            rank(&prefs, &Lang::parse("pt-BR").unwrap()),
            Some(Rank::BEST)
        );
        assert!(rank(&prefs, &Lang::parse("pt").unwrap()) > Some(Rank::BEST));
        assert!(
            rank(&prefs, &Lang::parse("pt").unwrap())
                < rank(&prefs, &Lang::parse("pt-PT").unwrap())
        );
        assert_eq!(rank(&prefs, &Lang::parse("en").unwrap()), None);
    }

    /// Texts that are the same in Portuguese and in English, and why.
    const SAME_IN_BOTH: &[Text] = &[
        // "ms", the unit's symbol, is written alike in both.
        Text::ColumnMs,
    ];

    /// Every text is translated: none is empty, and none but those of [`SAME_IN_BOTH`]
    /// reads the same in both languages; the failure names each one that is not.
    #[test]
    fn every_text_is_translated() {
        let untranslated: Vec<String> = Text::ALL
            .iter()
            .filter(|t| {
                t.pt().trim().is_empty()
                    || t.en().trim().is_empty()
                    || (t.pt() == t.en() && !SAME_IN_BOTH.contains(t))
            })
            .map(|t| format!("{t:?} ({:?} / {:?})", t.pt(), t.en()))
            .collect();
        assert!(untranslated.is_empty(), "not translated: {untranslated:?}");
        // The allowed ones are the same indeed (else they need no place there).
        for t in SAME_IN_BOTH {
            assert_eq!(t.pt(), t.en(), "{t:?}");
        }
    }

    /// Each text takes the same values in both languages.
    #[test]
    fn both_languages_take_the_same_values() {
        for t in Text::ALL {
            let mut pt = Text::names(t.pt());
            let mut en = Text::names(t.en());
            pt.sort();
            en.sort();
            assert_eq!(pt, en, "{t:?}");
        }
    }

    #[test]
    fn values_are_put_in_once() {
        let filled = Text::RelatedAsked.fill(
            PageLang::En,
            &[("last", "{ibi}"), ("ibi", "<code>X</code>")],
        );
        assert_eq!(
            filled,
            "The last IBI asked for was <code>{ibi}</code>, named by an Archive for <code>X</code>."
        );
        assert_eq!(Text::Round.fill(PageLang::Pt, &[]), "Rodada {n}");
    }

    #[test]
    fn numbers_in_each_language() {
        let archives = |lang, n| {
            count(
                lang,
                n,
                Text::ArchivesIncludedZero,
                Text::ArchivesIncludedOne,
                Text::ArchivesIncludedMany,
            )
        };
        assert_eq!(archives(PageLang::En, 0), "No Archive included");
        assert_eq!(archives(PageLang::En, 1), "1 Archive included");
        assert_eq!(archives(PageLang::En, 2), "2 Archives included");
        assert_eq!(archives(PageLang::Pt, 0), "Nenhum Arquivo incluído");
        assert_eq!(archives(PageLang::Pt, 1), "1 Arquivo incluído");
        assert_eq!(archives(PageLang::Pt, 12), "12 Arquivos incluídos");
        assert_eq!(decimal(PageLang::En, 2.46), "2.5");
        assert_eq!(decimal(PageLang::Pt, 2.46), "2,5");
    }

    /// Dates as each language writes them (the seconds worked out by hand: 1 March 2022
    /// is 19,052 days after 1970-01-01; 31 December 1969, one second before it).
    #[test]
    fn dates_in_each_language() {
        let march = 19_052 * 86_400 + 8 * 3600 + 30 * 60;
        assert_eq!(
            datetime(PageLang::Pt, march),
            "1 de março de 2022, 08:30:00 UTC"
        );
        assert_eq!(datetime(PageLang::En, march), "1 March 2022, 08:30:00 UTC");
        assert_eq!(datetime(PageLang::En, -1), "31 December 1969, 23:59:59 UTC");
        assert_eq!(
            datetime(PageLang::Pt, -1),
            "31 de dezembro de 1969, 23:59:59 UTC"
        );
    }
}
