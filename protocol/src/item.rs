//! The values of an item's fields that answers carry as they are (Table 9.3 of the
//! resolution standard): its state and the kind of its content.

use serde::Deserialize;

/// `state` of Figure 5.4 of the resolution standard, plus the tombstone state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum State {
    Original,
    Copy,
    Deleted,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Original => "Original",
            State::Copy => "Copy",
            State::Deleted => "Deleted",
        }
    }

    /// The state `word` names, as an answer writes it, if it names one.
    pub fn from_word(word: &str) -> Option<State> {
        [State::Original, State::Copy, State::Deleted]
            .into_iter()
            .find(|state| state.as_str() == word)
    }
}

/// `contenttype` of Table 9.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
pub enum ContentType {
    #[default]
    Data,
    Metadata,
}

impl ContentType {
    pub fn as_str(self) -> &'static str {
        match self {
            ContentType::Data => "Data",
            ContentType::Metadata => "Metadata",
        }
    }
}
