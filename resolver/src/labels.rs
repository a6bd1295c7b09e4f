//! The values of the metrics' labels, each an enum spelt in one place: what a resolution
//! ended in ([`Resolution`]), what became of a request to an Archive ([`Request`]), what
//! the location memory did ([`MemoryUse`]), what became of an acknowledgment
//! ([`Acknowledgment`]), which per-client bound refused a request ([`Limit`]) and an
//! inclusion at another address ([`Move`]). A leaf:
//! the modules that count import it, and `metrics` writes it; each enum's `ALL` is the
//! set of series present at 0 from the start.

/// Each enum: its variants with their spelling, `ALL`, `label()` and the encoding.
macro_rules! label_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
        }

        impl $name {
            /// Every value, in the order the metrics list them.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// As the metrics and the log spell it.
            pub fn label(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl ::prometheus_client::encoding::EncodeLabelValue for $name {
            fn encode(
                &self,
                encoder: &mut ::prometheus_client::encoding::LabelValueEncoder<'_>,
            ) -> ::std::fmt::Result {
                ::std::fmt::Write::write_str(encoder, self.label())
            }
        }
    };
}

/// For the enums of other leaves that are metric labels too (an Archive's health).
pub(crate) use label_enum;

label_enum! {
    /// What a resolution ended in.
    Resolution {
        Found => "found",
        NotFound => "not_found",
        Unavailable => "unavailable",
        NoTranslation => "no_translation",
        Deleted => "deleted",
        Suspicion => "suspicion",
        NoOriginal => "no_original",
        Unverifiable => "unverifiable",
        Chain => "chain",
        Throttled => "throttled",
        /// A request that was no persistent URL the resolver could read.
        BadRequest => "bad_request",
        /// Longer than the resolution's bound.
        TimedOut => "timed_out",
    }
}

label_enum! {
    /// What became of one request to an Archive.
    Request {
        /// A pair list (the item, or an empty one).
        Answered => "answered",
        /// No connection, an error status, an answer that is no pair list.
        Failed => "failed",
        TimedOut => "timed_out",
        /// `503`/`429` until the timeout.
        Overloaded => "overloaded",
        /// Not sent: as many requests under way as the resolver allows.
        NotSent => "not_sent",
        /// Not sent: the Archive's address is outside the networks asked.
        Refused => "refused",
    }
}

label_enum! {
    /// What the location memory did for a resolution.
    MemoryUse {
        /// The remembered Archive answered with the item.
        Hit => "hit",
        /// The remembered Archive no longer holds it.
        Stale => "stale",
        /// A remembered entry verified again.
        Verify => "verify",
        /// Nothing remembered; the home answered with the item.
        Home => "home",
        /// Nothing remembered; the home did not have it.
        HomeMiss => "home_miss",
        /// Nothing remembered, no home: every Archive asked.
        Miss => "miss",
    }
}

label_enum! {
    /// What became of an acknowledgment.
    Acknowledgment {
        Sent => "sent",
        Failed => "failed",
        /// Not sent: too many waiting.
        Dropped => "dropped",
    }
}

label_enum! {
    /// A per-client bound.
    Limit {
        Resolutions => "resolutions",
        Misses => "misses",
        Connections => "connections",
    }
}

label_enum! {
    /// An inclusion at another address than the one registered.
    Move {
        /// Taken: the old address no longer answered as the Archive.
        Moved => "moved",
        /// Refused while the old address answers as the Archive.
        Refused => "refused",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_is_spelt_once_in_snake_case() {
        let all: Vec<&str> = Resolution::ALL
            .iter()
            .map(|r| r.label())
            .chain(Request::ALL.iter().map(|r| r.label()))
            .chain(MemoryUse::ALL.iter().map(|r| r.label()))
            .chain(Acknowledgment::ALL.iter().map(|r| r.label()))
            .chain(Limit::ALL.iter().map(|r| r.label()))
            .chain(Move::ALL.iter().map(|r| r.label()))
            .collect();
        for label in &all {
            assert!(
                label.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{label}"
            );
        }
        assert_eq!(Resolution::ALL.len(), 12);
        assert_eq!(Request::TimedOut.label(), "timed_out");
    }
}
