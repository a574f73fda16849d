//! The environment the server will see (after planned changes).
//!
//! Kept twice: `raw`, the variables byte for byte (what exec passes on: two names that differ
//! only in bytes that are not UTF-8 stay two variables), and `vars`, the same as text for the
//! rules to read. Changes go through [`Env::set`] / [`Env::unset`], which keep both in step.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Env {
    /// Name → value as text (UTF-8-lossy): read-only, for the rules.
    pub vars: BTreeMap<String, String>,
    /// Name → value, byte-exact: what the server gets.
    raw: BTreeMap<OsString, OsString>,
}

impl Env {
    pub(crate) fn from_process() -> Self {
        Env::from_raw(std::env::vars_os())
    }

    /// From byte-exact pairs.
    pub(crate) fn from_raw<I: IntoIterator<Item = (OsString, OsString)>>(pairs: I) -> Self {
        let mut env = Env::default();
        for (k, v) in pairs {
            env.vars.insert(
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            );
            env.raw.insert(k, v);
        }
        env
    }

    pub fn from_pairs<I: IntoIterator<Item = (S, S)>, S: Into<String>>(pairs: I) -> Self {
        Env::from_raw(
            pairs
                .into_iter()
                .map(|(k, v)| (OsString::from(k.into()), OsString::from(v.into()))),
        )
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// Sets a variable (a fix's or a profile's: names and values are text).
    pub(crate) fn set(&mut self, name: &str, value: &str) {
        self.vars.insert(name.to_owned(), value.to_owned());
        self.raw.insert(name.into(), value.into());
    }

    /// Unsets a variable (every raw name that reads as `name`); whether it was set.
    pub(crate) fn unset(&mut self, name: &str) -> bool {
        let was = self.vars.remove(name).is_some();
        self.raw.retain(|k, _| k.to_string_lossy() != name);
        was
    }

    /// Every variable, byte-exact, in name order.
    pub(crate) fn raw(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.raw.iter().map(|(k, v)| (k.as_bytes(), v.as_bytes()))
    }

    /// True for a set variable whose value reads as "on" (1/true/yes/on, case-insensitive).
    pub(crate) fn truthy(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn names_that_differ_only_in_invalid_bytes_stay_apart() {
        let a = OsString::from_vec(b"X_\xff".to_vec());
        let b = OsString::from_vec(b"X_\xfe".to_vec());
        let mut env = Env::from_raw([(a, "1".into()), (b, "2".into())]);
        env.set("Y", "3");
        let raw: Vec<_> = env.raw().collect();
        assert_eq!(
            raw,
            [
                (&b"X_\xfe"[..], &b"2"[..]),
                (&b"X_\xff"[..], &b"1"[..]),
                (&b"Y"[..], &b"3"[..])
            ]
        );
        assert!(env.unset("Y"));
        assert_eq!(env.raw().count(), 2);
    }
}
