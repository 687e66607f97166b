//! Whether this machine's KVM can run a guest, so that kernels could be booted with
//! `-accel kvm` and timed for real: `/dev/kvm` opened, a VM and one vCPU made, and a
//! guest of three instructions run (an `out` of a known byte to a port, then `hlt`).
//! The guest must come back within a time limit: a KVM that cannot run a standard
//! guest (a paravirtual nested KVM such as `kvm-pvm` runs only guests built for it and
//! hangs on others) is reported as broken, not waited for. A loaded `kvm_pvm` module
//! is reported as such before any guest runs: the tiny real-mode guest does run under
//! it, a standard kernel does not (it hangs after the firmware).

use std::path::Path;
use std::time::Duration;

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum KvmStatus {
    /// A vCPU ran the test guest to its `hlt`.
    Works { api_version: i32 },
    /// No KVM to use here (no device, no permission, not an x86-64 host).
    Absent { reason: String },
    /// A KVM device that cannot run a standard guest.
    Broken { reason: String },
}

impl KvmStatus {
    pub fn works(&self) -> bool {
        matches!(self, KvmStatus::Works { .. })
    }

    /// Why kernels cannot be booted under KVM here; None when they can.
    pub fn why_not(&self) -> Option<&str> {
        match self {
            KvmStatus::Works { .. } => None,
            KvmStatus::Absent { reason } | KvmStatus::Broken { reason } => Some(reason),
        }
    }
}

/// The port and byte the test guest writes before it halts.
const PROBE_PORT: u16 = 0x10;
const PROBE_BYTE: u8 = 0x2a;

/// Probes `/dev/kvm`, waiting at most `limit` for the test guest.
pub fn probe(limit: Duration) -> KvmStatus {
    let device = Path::new("/dev/kvm");
    if device.exists() && Path::new("/sys/module/kvm_pvm").exists() {
        return KvmStatus::Broken {
            reason: "the loaded KVM is kvm_pvm (/sys/module/kvm_pvm), a paravirtual nested KVM \
                     that runs only guest kernels built for PVM; kfdo boots standard kernels"
                .into(),
        };
    }
    probe_device(device, limit)
}

/// Probes the KVM device at `device` (see [`probe`]).
#[cfg(target_arch = "x86_64")]
pub fn probe_device(device: &Path, limit: Duration) -> KvmStatus {
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(device)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return KvmStatus::Absent {
                reason: format!(
                    "no {} (the kvm module is not loaded, or this machine is a virtual machine \
                     without nested virtualization)",
                    device.display()
                ),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return KvmStatus::Absent {
                reason: format!(
                    "cannot open {}: {e} (add the user to the `kvm` group)",
                    device.display()
                ),
            }
        }
        Err(e) => {
            return KvmStatus::Absent {
                reason: format!("cannot open {}: {e}", device.display()),
            }
        }
    };
    let device = device.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    // The guest runs on a thread of its own: a KVM_RUN that never returns leaves only
    // that thread behind.
    std::thread::spawn(move || {
        let _ = tx.send(run_test_guest(file, &device));
    });
    match rx.recv_timeout(limit) {
        Ok(status) => status,
        Err(_) => KvmStatus::Broken {
            reason: format!(
                "a vCPU did not finish a three-instruction guest within {:.0} s: this KVM \
                 cannot run a standard guest (a paravirtual nested KVM?)",
                limit.as_secs_f64()
            ),
        },
    }
}

#[cfg(not(target_arch = "x86_64"))]
pub fn probe_device(_device: &Path, _limit: Duration) -> KvmStatus {
    KvmStatus::Absent {
        reason: "kfdo boots kernels under KVM on x86-64 hosts only".into(),
    }
}

#[cfg(target_arch = "x86_64")]
fn run_test_guest(file: std::fs::File, device: &Path) -> KvmStatus {
    use kvm_ioctls::{Kvm, VcpuExit};
    use std::os::fd::{FromRawFd, IntoRawFd};

    let broken = |what: &str, e: &dyn std::fmt::Display| KvmStatus::Broken {
        reason: format!("{}: {what} failed: {e}", device.display()),
    };
    // SAFETY: the descriptor was just opened and is handed over: `Kvm` owns and closes it.
    let kvm = unsafe { Kvm::from_raw_fd(file.into_raw_fd()) };
    let api_version = kvm.get_api_version();
    if api_version != kvm_bindings::KVM_API_VERSION as i32 {
        return KvmStatus::Broken {
            reason: format!(
                "{}: KVM API version {api_version}, not {} (is it a KVM device?)",
                device.display(),
                kvm_bindings::KVM_API_VERSION
            ),
        };
    }
    let vm = match kvm.create_vm() {
        Ok(vm) => vm,
        Err(e) => return broken("KVM_CREATE_VM", &e),
    };
    // One page of guest memory at 0x1000 holding the code.
    const GUEST_ADDR: u64 = 0x1000;
    let code = [0xb0, PROBE_BYTE, 0xe6, PROBE_PORT as u8, 0xf4]; // mov al, B; out P, al; hlt
    let mut page = match memmap2::MmapMut::map_anon(0x1000) {
        Ok(m) => m,
        Err(e) => return broken("mapping guest memory", &e),
    };
    page[..code.len()].copy_from_slice(&code);
    let region = kvm_bindings::kvm_userspace_memory_region {
        slot: 0,
        flags: 0,
        guest_phys_addr: GUEST_ADDR,
        memory_size: page.len() as u64,
        userspace_addr: page.as_mut_ptr() as u64,
    };
    // SAFETY: the region is `page`, mapped for its whole length and alive until the end
    // of this function, after the VM and its vCPU (declared later) are dropped.
    if let Err(e) = unsafe { vm.set_user_memory_region(region) } {
        return broken("KVM_SET_USER_MEMORY_REGION", &e);
    }
    let mut vcpu = match vm.create_vcpu(0) {
        Ok(v) => v,
        Err(e) => return broken("KVM_CREATE_VCPU", &e),
    };
    // Real mode, code segment at 0, the first instruction at GUEST_ADDR.
    let mut sregs = match vcpu.get_sregs() {
        Ok(s) => s,
        Err(e) => return broken("KVM_GET_SREGS", &e),
    };
    sregs.cs.base = 0;
    sregs.cs.selector = 0;
    if let Err(e) = vcpu.set_sregs(&sregs) {
        return broken("KVM_SET_SREGS", &e);
    }
    let regs = kvm_bindings::kvm_regs {
        rip: GUEST_ADDR,
        rflags: 2,
        ..Default::default()
    };
    if let Err(e) = vcpu.set_regs(&regs) {
        return broken("KVM_SET_REGS", &e);
    }
    let mut wrote = false;
    loop {
        match vcpu.run() {
            Ok(VcpuExit::IoOut(port, data)) if port == PROBE_PORT && data == [PROBE_BYTE] => {
                wrote = true
            }
            Ok(VcpuExit::Hlt) if wrote => return KvmStatus::Works { api_version },
            Ok(exit) => {
                return KvmStatus::Broken {
                    reason: format!(
                    "{}: the test guest stopped with {exit:?} instead of writing {PROBE_BYTE:#x} \
                         to port {PROBE_PORT:#x} and halting",
                    device.display()
                ),
                }
            }
            Err(e) => return broken("KVM_RUN", &e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_device_is_absent_and_named() {
        let s = probe_device(Path::new("/nonexistent/kvm"), Duration::from_secs(2));
        assert!(!s.works());
        let why = s.why_not().unwrap();
        if cfg!(target_arch = "x86_64") {
            assert!(matches!(s, KvmStatus::Absent { .. }), "{s:?}");
            assert!(why.contains("no /nonexistent/kvm"), "{why}");
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn a_device_that_is_not_kvm_is_broken_not_waited_for() {
        // /dev/null opens, but answers no KVM ioctl.
        let s = probe_device(Path::new("/dev/null"), Duration::from_secs(5));
        match &s {
            KvmStatus::Broken { reason } => {
                assert!(reason.starts_with("/dev/null: "), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }
}
