//! Running SGLang as a service: the systemd unit that starts the launcher, and the readiness
//! wait that keeps the unit "activating" until SGLang answers.

pub(crate) mod ready;
pub(crate) mod unit;
