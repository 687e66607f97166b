//! The `-plugin` argument QEMU gets: the plugin file and its `key=value` options, each
//! value escaped for QEMU's option syntax. One builder for user mode, system mode and
//! the counting launcher, so they cannot disagree on a key.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use crate::emulated::counters::CacheModel;
use crate::emulated::plugin::qemu_opt_escape;

pub struct PluginArgs {
    bytes: Vec<u8>,
}

impl PluginArgs {
    pub fn new(plugin: &Path) -> PluginArgs {
        PluginArgs {
            bytes: plugin.as_os_str().as_bytes().to_vec(),
        }
    }

    pub fn set(mut self, key: &str, value: &[u8]) -> PluginArgs {
        self.bytes.push(b',');
        self.bytes.extend_from_slice(key.as_bytes());
        self.bytes.push(b'=');
        self.bytes.extend_from_slice(&qemu_opt_escape(value));
        self
    }

    pub fn path(self, key: &str, value: &Path) -> PluginArgs {
        self.set(key, value.as_os_str().as_bytes())
    }

    pub fn number(self, key: &str, value: u64) -> PluginArgs {
        self.set(key, value.to_string().as_bytes())
    }

    /// Counting on, with the cache and TLB model.
    pub fn counters(mut self, cache: &CacheModel) -> PluginArgs {
        self = self.set("counters", b"on");
        for a in cache.plugin_args() {
            let (k, v) = a.split_once('=').expect("plugin_args gives key=value");
            self = self.set(k, v.as_bytes());
        }
        self
    }

    pub fn into_os_string(self) -> OsString {
        OsString::from_vec(self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_and_keys_kept_in_order() {
        let a = PluginArgs::new(Path::new("/tmp/p.so"))
            .path("out", Path::new("/tmp/a,b/c.vlbr"))
            .number("period", 7)
            .into_os_string();
        assert_eq!(a, "/tmp/p.so,out=/tmp/a,,b/c.vlbr,period=7");
        let c = PluginArgs::new(Path::new("p")).counters(&CacheModel::default());
        let s = c.into_os_string().into_string().unwrap();
        assert!(s.starts_with("p,counters=on,"), "{s}");
    }
}
