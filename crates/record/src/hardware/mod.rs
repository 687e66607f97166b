//! The hardware path: what this machine's CPU, kernel and perf can record, the `perf
//! record` command for each branch-sampling method, and the `auto` fallback chain
//! (hardware branch stacks -> emulated LBR -> IP-only), explained at each step.
//!
//! Detection reads files only (so it can be tested from recorded fixtures under a fake
//! root): `/proc/cpuinfo` (vendor, flags such as `arch_lbr`, `brs`, `amd_lbr_v2`), PMUs under
//! `/sys/bus/event_source/devices` (with `caps/branches`, the LBR depth the kernel
//! found), `/proc/sys/kernel/perf_event_paranoid` and `kptr_restrict`. A live probe with
//! `perf record` (does a branch-stack event open here?) is added by [`Capabilities::detect`].

use crate::error::Error;
use serde::Serialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Intel Last Branch Record (legacy model-specific LBR or architectural LBR).
    Lbr,
    /// AMD Branch Sampling (Zen 3).
    Brs,
    /// AMD LBR v2 (Zen 4 and later): reported under BRS's family, perf `-b` works alike.
    LbrV2,
    /// Arm Statistical Profiling Extension (branch records, one branch per sample).
    Spe,
    /// Arm Branch Record Buffer Extension.
    Brbe,
    /// vLBR: QEMU user-mode emulation with the kfdo plugin.
    Emulated,
    /// Instruction pointers only (`cpu-clock`): AutoFDO from IPs alone, weaker.
    Ip,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Lbr => "lbr",
            Method::Brs => "brs",
            Method::LbrV2 => "lbrv2",
            Method::Spe => "spe",
            Method::Brbe => "brbe",
            Method::Emulated => "emulated",
            Method::Ip => "ip",
        }
    }
    pub fn all() -> [Method; 7] {
        [
            Method::Lbr,
            Method::Brs,
            Method::LbrV2,
            Method::Spe,
            Method::Brbe,
            Method::Emulated,
            Method::Ip,
        ]
    }
    pub fn is_hardware_branch(self) -> bool {
        matches!(
            self,
            Method::Lbr | Method::Brs | Method::LbrV2 | Method::Spe | Method::Brbe
        )
    }
}

impl std::str::FromStr for Method {
    type Err = String;
    /// A method by its name (`Method::name`); the error lists the names.
    fn from_str(s: &str) -> Result<Method, String> {
        Method::all()
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Method::all().iter().map(|m| m.name()).collect();
                format!("use auto or one of {}", names.join(", "))
            })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Vendor {
    Intel,
    Amd,
    Arm,
    Other,
}

/// Result of probing `perf record` live on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// `perf record -b` with the method's event succeeded and wrote branch stacks.
    pub branch_ok: bool,
    /// perf's message when it failed.
    pub message: String,
}

/// What the machine offers.
#[derive(Debug, Clone, Serialize)]
pub struct Capabilities {
    pub vendor: Vendor,
    pub model_name: String,
    pub cpu_family: Option<u32>,
    pub flags: Vec<String>,
    /// PMUs under /sys/bus/event_source/devices.
    pub pmus: Vec<String>,
    /// LBR / branch-stack depth from a PMU's `caps/branches`, when the kernel exposes it.
    pub branch_depth: Option<u32>,
    /// The core PMU name the kernel chose (`caps/pmu_name`), e.g. `skylake`.
    pub pmu_name: Option<String>,
    pub perf_event_paranoid: Option<i32>,
    pub kptr_restrict: Option<i32>,
    pub is_root: bool,
    /// `perf` found on PATH.
    pub perf: Option<PathBuf>,
    /// `qemu-x86_64` found on PATH.
    pub qemu_user: Option<PathBuf>,
    pub qemu_system: Option<PathBuf>,
    /// `qemu-aarch64` and `qemu-system-aarch64` found on PATH: aarch64 programs and arm64
    /// kernels are recorded under them (the architecture comes from the ELF header).
    pub qemu_user_aarch64: Option<PathBuf>,
    pub qemu_system_aarch64: Option<PathBuf>,
    /// The host runs x86-64 (the emulator runs x86-64 guests).
    pub host_x86_64: bool,
    /// Live probe of hardware branch sampling (None: not probed).
    pub probe: Option<Probe>,
    /// Running in a virtual machine (the `hypervisor` cpuinfo flag).
    pub hypervisor: bool,
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

impl Capabilities {
    /// Reads a machine description under `root` ("/" for this machine): `proc/cpuinfo`,
    /// `sys/bus/event_source/devices/*`, `proc/sys/kernel/{perf_event_paranoid,kptr_restrict}`.
    /// Tools and privileges are not looked at (see [`Capabilities::detect`]).
    pub fn from_root(root: &Path) -> Capabilities {
        let cpuinfo = std::fs::read_to_string(root.join("proc/cpuinfo")).unwrap_or_default();
        let mut vendor = Vendor::Other;
        let mut model_name = String::new();
        let mut flags: Vec<String> = Vec::new();
        let mut family = None;
        for line in cpuinfo.lines() {
            let (k, v) = match line.split_once(':') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => continue,
            };
            match k {
                "vendor_id" if vendor == Vendor::Other => {
                    vendor = match v {
                        "GenuineIntel" => Vendor::Intel,
                        "AuthenticAMD" | "HygonGenuine" => Vendor::Amd,
                        _ => Vendor::Other,
                    }
                }
                "CPU implementer" if vendor == Vendor::Other => vendor = Vendor::Arm,
                "model name" if model_name.is_empty() => model_name = v.to_string(),
                "cpu family" if family.is_none() => family = v.parse().ok(),
                "flags" | "Features" if flags.is_empty() => {
                    flags = v.split_whitespace().map(str::to_string).collect()
                }
                _ => {}
            }
        }
        let dev = root.join("sys/bus/event_source/devices");
        let mut pmus: Vec<String> = std::fs::read_dir(&dev)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().to_string())
                    // sysfs has no dot files; the test fixtures keep empty
                    // directories in git with a `.gitkeep`.
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        pmus.sort();
        let mut branch_depth = None;
        let mut pmu_name = None;
        for p in &pmus {
            if let Some(b) =
                read_trim(&dev.join(p).join("caps/branches")).and_then(|s| s.parse::<u32>().ok())
            {
                if b > 0 {
                    branch_depth = Some(branch_depth.map_or(b, |d: u32| d.max(b)));
                }
            }
            if pmu_name.is_none() {
                pmu_name = read_trim(&dev.join(p).join("caps/pmu_name"));
            }
        }
        let num = |p: &str| read_trim(&root.join(p)).and_then(|s| s.parse().ok());
        Capabilities {
            vendor,
            model_name,
            cpu_family: family,
            hypervisor: flags.iter().any(|f| f == "hypervisor"),
            flags,
            pmus,
            branch_depth,
            pmu_name,
            perf_event_paranoid: num("proc/sys/kernel/perf_event_paranoid"),
            kptr_restrict: num("proc/sys/kernel/kptr_restrict"),
            is_root: false,
            perf: None,
            qemu_user: None,
            qemu_system: None,
            qemu_user_aarch64: None,
            qemu_system_aarch64: None,
            host_x86_64: false,
            probe: None,
        }
    }

    /// This machine, with tools, privileges and a live probe of branch sampling.
    pub fn detect() -> Capabilities {
        let mut c = Capabilities::from_root(Path::new("/"));
        c.is_root = nix::unistd::geteuid().is_root();
        c.perf = which("perf");
        c.qemu_user = which("qemu-x86_64");
        c.qemu_system = which("qemu-system-x86_64");
        c.qemu_user_aarch64 = which("qemu-aarch64");
        c.qemu_system_aarch64 = which("qemu-system-aarch64");
        c.host_x86_64 = cfg!(target_arch = "x86_64");
        if let (Some(m), Some(_)) = (c.hardware_candidate(), &c.perf) {
            c.probe = Some(probe_perf(&c, m));
        }
        c
    }

    fn has_flag(&self, f: &str) -> bool {
        self.flags.iter().any(|x| x == f)
    }
    fn has_pmu(&self, prefix: &str) -> bool {
        self.pmus.iter().any(|p| p.starts_with(prefix))
    }

    /// The hardware branch method the CPU and kernel advertise, if any.
    pub fn hardware_candidate(&self) -> Option<Method> {
        Method::all()
            .into_iter()
            .filter(|m| m.is_hardware_branch())
            .find(|&m| self.advertises(m).is_ok())
    }

    /// Whether the CPU / kernel advertise `m` (hardware methods only), and why not.
    fn advertises(&self, m: Method) -> Result<(), String> {
        let core_pmu = self.has_pmu("cpu");
        match m {
            Method::Lbr => {
                if self.vendor != Vendor::Intel {
                    return Err("Intel LBR needs an Intel CPU".into());
                }
                if !core_pmu {
                    return Err("no core PMU in /sys/bus/event_source/devices (a VM without PMU passthrough?)".into());
                }
                if self.has_flag("arch_lbr") || self.branch_depth.is_some() {
                    Ok(())
                } else {
                    Err("the kernel reports no LBR (no arch_lbr flag, no caps/branches in the cpu PMU)".into())
                }
            }
            Method::Brs => {
                if self.vendor != Vendor::Amd {
                    return Err("AMD BRS needs an AMD CPU".into());
                }
                if self.has_flag("brs") && core_pmu {
                    Ok(())
                } else {
                    Err("no `brs` flag in /proc/cpuinfo (BRS is Zen 3 only)".into())
                }
            }
            Method::LbrV2 => {
                if self.vendor != Vendor::Amd {
                    return Err("AMD LBR v2 needs an AMD CPU".into());
                }
                if self.has_flag("amd_lbr_v2") && core_pmu {
                    Ok(())
                } else {
                    Err("no `amd_lbr_v2` flag in /proc/cpuinfo (Zen 4 and later)".into())
                }
            }
            Method::Spe => {
                if self.has_pmu("arm_spe") {
                    Ok(())
                } else {
                    Err("no arm_spe PMU in /sys/bus/event_source/devices".into())
                }
            }
            Method::Brbe => {
                if self.vendor != Vendor::Arm {
                    return Err("BRBE needs an Arm CPU".into());
                }
                let armpmu = self
                    .pmus
                    .iter()
                    .any(|p| p.starts_with("armv8_pmuv3") || p.starts_with("armv9_"));
                if armpmu && self.branch_depth.is_some() {
                    Ok(())
                } else {
                    Err("the Arm PMU reports no branch records (no caps/branches: no BRBE, or a kernel before 6.17)".into())
                }
            }
            _ => Err("not a hardware branch method".into()),
        }
    }

    /// Whether `m` can be used here, and why not.
    pub fn usable(&self, m: Method) -> Result<(), String> {
        match m {
            Method::Emulated => {
                if !self.host_x86_64 {
                    return Err("emulated LBR runs x86-64 programs under qemu-x86_64; this host is not x86-64".into());
                }
                match &self.qemu_user {
                    Some(_) => Ok(()),
                    None => Err("qemu-x86_64 not found (apt-get install qemu-user)".into()),
                }
            }
            Method::Ip => match &self.perf {
                Some(_) => Ok(()),
                None => Err("perf not found (apt-get install linux-perf)".into()),
            },
            hwm => {
                self.advertises(hwm)?;
                if self.perf.is_none() {
                    return Err("perf not found (apt-get install linux-perf)".into());
                }
                if let Some(p) = self.perf_event_paranoid {
                    if p > 2 && !self.is_root {
                        return Err(format!(
                            "perf_event_paranoid is {p}: unprivileged users cannot open PMU events (sysctl kernel.perf_event_paranoid=1, or run as root)"
                        ));
                    }
                }
                match &self.probe {
                    Some(pr) if !pr.branch_ok => Err(format!(
                        "perf could not record branch stacks: {}",
                        pr.message
                    )),
                    _ => Ok(()),
                }
            }
        }
    }

    /// The emulators emulated recording runs guests under: (guest, what it runs, the
    /// emulator found on PATH, the Debian package that installs it).
    pub fn emulators(&self) -> [(&'static str, &'static str, Option<&Path>, &'static str); 4] {
        [
            ("x86_64", "programs", self.qemu_user.as_deref(), "qemu-user"),
            (
                "x86_64",
                "kernels",
                self.qemu_system.as_deref(),
                "qemu-system-x86",
            ),
            (
                "aarch64",
                "programs",
                self.qemu_user_aarch64.as_deref(),
                "qemu-user",
            ),
            (
                "aarch64",
                "kernels",
                self.qemu_system_aarch64.as_deref(),
                "qemu-system-arm",
            ),
        ]
    }

    /// `--method auto` for a command: each step and why it was or was not taken.
    pub fn choose_auto(&self) -> (Method, Vec<String>) {
        let mut steps = Vec::new();
        match self.hardware_candidate() {
            Some(m) => match self.usable(m) {
                Ok(()) => {
                    steps.push(format!(
                        "hardware branch sampling available ({}): using it",
                        m.name()
                    ));
                    return (m, steps);
                }
                Err(why) => steps.push(format!(
                    "hardware {} advertised but not usable: {why}",
                    m.name()
                )),
            },
            None => steps.push(format!(
                "no hardware branch sampling: {}",
                self.why_no_hardware()
            )),
        }
        match self.usable(Method::Emulated) {
            Ok(()) => {
                steps.push("using emulated LBR (qemu-x86_64 + vLBR plugin)".into());
                return (Method::Emulated, steps);
            }
            Err(why) => steps.push(format!("emulated LBR not available: {why}")),
        }
        steps
            .push("falling back to IP-only samples (cpu-clock); AutoFDO from IPs is weaker".into());
        (Method::Ip, steps)
    }

    /// `--method auto` with `--system`: emulation cannot record this machine's kernel.
    pub fn choose_auto_system(&self) -> (Method, Vec<String>) {
        let mut steps = Vec::new();
        if let Some(m) = self.hardware_candidate() {
            match self.usable(m) {
                Ok(()) => {
                    steps.push(format!(
                        "hardware branch sampling available ({}): using it",
                        m.name()
                    ));
                    return (m, steps);
                }
                Err(why) => steps.push(format!(
                    "hardware {} advertised but not usable: {why}",
                    m.name()
                )),
            }
        } else {
            steps.push(format!(
                "no hardware branch sampling: {}",
                self.why_no_hardware()
            ));
        }
        steps.push(
            "emulation cannot record this running system (use --emulated-kernel to boot a kernel under QEMU); falling back to IP-only samples"
                .into(),
        );
        (Method::Ip, steps)
    }

    /// One sentence on why no hardware branch method is available.
    pub fn why_no_hardware(&self) -> String {
        let mut parts = Vec::new();
        if self.hypervisor {
            parts.push("this is a virtual machine (cpuinfo flag `hypervisor`)".to_string());
        }
        if !self.has_pmu("cpu")
            && !self
                .pmus
                .iter()
                .any(|p| p.starts_with("armv8_pmuv3") || p.starts_with("arm_spe"))
        {
            parts.push(format!(
                "the kernel registered no hardware core PMU (PMUs: {})",
                if self.pmus.is_empty() {
                    "none".to_string()
                } else {
                    self.pmus.join(", ")
                }
            ));
        }
        for m in [
            Method::Lbr,
            Method::Brs,
            Method::LbrV2,
            Method::Spe,
            Method::Brbe,
        ] {
            let applies = match m {
                Method::Lbr => self.vendor == Vendor::Intel,
                Method::Brs | Method::LbrV2 => self.vendor == Vendor::Amd,
                Method::Spe | Method::Brbe => self.vendor == Vendor::Arm,
                _ => false,
            };
            if applies {
                if let Err(w) = self.advertises(m) {
                    parts.push(format!("{}: {w}", m.name()));
                }
            }
        }
        if parts.is_empty() {
            parts.push(format!(
                "no branch-sampling support found for this CPU ({})",
                self.model_name
            ));
        }
        parts.join("; ")
    }
}

/// What to record with hardware perf.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scope {
    /// The command given (user and kernel as perf allows).
    Command,
    /// The whole system (`-a`), user and kernel, for this many seconds.
    System(f64),
    /// The whole system, kernel only (`:k`, `-N`), as the kernel's AutoFDO guide does.
    SystemKernel(f64),
    /// The whole system, user only (`:u`).
    SystemUser(f64),
}

/// The `perf record` command line for a hardware method (or IP-only). `perf` is taken from
/// `caps.perf` (default `perf`).
pub fn perf_record_command(
    caps: &Capabilities,
    m: Method,
    period: u64,
    output: &Path,
    command: &[OsString],
    scope: Scope,
) -> Result<Vec<OsString>, String> {
    let perf = caps.perf.clone().unwrap_or_else(|| PathBuf::from("perf"));
    let mut v: Vec<OsString> = vec![perf.into(), "record".into()];
    let suffix = match scope {
        Scope::SystemKernel(_) => ":k",
        Scope::SystemUser(_) => ":u",
        _ => "",
    };
    let push = |v: &mut Vec<OsString>, s: &str| v.push(s.into());
    match m {
        Method::Lbr => {
            push(&mut v, "-e");
            push(&mut v, &format!("BR_INST_RETIRED.NEAR_TAKEN{suffix}"));
            push(&mut v, "-b");
        }
        Method::Brs | Method::LbrV2 => {
            // RETIRED_TAKEN_BRANCH_INSTRUCTIONS (PMCx0C4) as a raw event, so that perf does
            // not need libpfm4 (`--pfm-events`); the kernel guide's command is equivalent.
            push(&mut v, "-e");
            push(
                &mut v,
                &format!(
                    "cpu/event=0xc4,umask=0x0/{}",
                    suffix.trim_start_matches(':')
                ),
            );
            push(&mut v, "-b");
        }
        Method::Spe => {
            // SPE samples operations; keep branches only, with their targets.
            push(&mut v, "-e");
            push(
                &mut v,
                &format!(
                    "arm_spe_0/branch_filter=1,ts_enable=1,pa_enable=0,load_filter=0,store_filter=0/{}",
                    suffix.trim_start_matches(':')
                ),
            );
        }
        Method::Brbe => {
            push(&mut v, "-e");
            push(&mut v, &format!("BR_RETIRED{suffix}"));
            push(&mut v, "-j");
            push(&mut v, "any,save_type");
        }
        Method::Ip => {
            push(&mut v, "-e");
            push(&mut v, &format!("cpu-clock{suffix}"));
        }
        Method::Emulated => return Err("emulated recording does not use perf".into()),
    }
    if m != Method::Spe {
        push(&mut v, "-c");
        push(&mut v, &period.to_string());
    }
    match scope {
        Scope::Command => {}
        Scope::System(_) | Scope::SystemKernel(_) | Scope::SystemUser(_) => {
            push(&mut v, "-a");
            push(&mut v, "-N");
        }
    }
    push(&mut v, "-o");
    v.push(output.as_os_str().to_owned());
    push(&mut v, "--");
    match scope {
        Scope::Command => {
            if command.is_empty() {
                return Err("no command to record".into());
            }
            v.extend(command.iter().cloned());
        }
        Scope::System(s) | Scope::SystemKernel(s) | Scope::SystemUser(s) => {
            push(&mut v, "sleep");
            push(&mut v, &format!("{s}"));
        }
    }
    Ok(v)
}

/// Shell-quoted rendering of a command, for messages.
pub fn shell_words(cmd: &[OsString]) -> String {
    cmd.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                s.to_string()
            } else {
                format!("'{}'", s.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs a perf record command set up as `child_setup` says and checks the result: that it
/// holds samples (a recording without any is removed: [`Error::NoSamples`]), and for
/// branch methods that they carry branch stacks. Returns the recorded command's exit
/// status.
pub fn run_perf_checked(
    cmd: &[OsString],
    m: Method,
    output: &Path,
    period: u64,
    child_setup: &crate::stdio::ChildSetup,
) -> Result<i32, Error> {
    let mut child = std::process::Command::new(&cmd[0]);
    child.args(&cmd[1..]);
    child_setup.apply_place(&mut child);
    let stdio = &child_setup.stdio;
    stdio
        .apply(&mut child)
        .map_err(|e| Error::io("cannot set up perf's standard streams", e))?;
    let status = child
        .status()
        .map_err(|e| Error::io(format!("cannot run {}", cmd[0].to_string_lossy()), e))?;
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    if !output.exists() {
        return Err(Error::Request(format!(
            "perf wrote no {} (exit status {code})",
            output.display()
        )));
    }
    // Arm SPE's records come in the AUX area, not as SAMPLE records: nothing to count.
    if m == Method::Spe {
        return Ok(code);
    }
    let (total, with) = count_samples(output)?;
    if total == 0 {
        // perf wrote the file itself; an empty recording must not stay behind.
        let _ = std::fs::remove_file(output);
        return Err(Error::NoSamples {
            path: output.to_path_buf(),
            period,
        });
    }
    if m.is_hardware_branch() && with == 0 {
        return Err(Error::Request(format!(
            "{}: {total} samples and none has a branch stack: this machine's {} does not deliver branch records; try --method emulated",
            output.display(),
            m.name()
        )));
    }
    Ok(code)
}

/// Samples in the first 10,000 of a perf.data, and how many of them carry a branch
/// stack.
fn count_samples(path: &Path) -> Result<(u64, u64), Error> {
    let pd = kfdo_perf::PerfData::open(path).map_err(|source| Error::Perf {
        path: path.to_path_buf(),
        source,
    })?;
    let (mut total, mut with) = (0u64, 0u64);
    for r in pd.records() {
        if let Ok(kfdo_perf::Record::Sample(s)) = r {
            total += 1;
            with += u64::from(!s.branch_stack.is_empty());
        }
        if total >= 10_000 {
            break;
        }
    }
    Ok((total, with))
}

/// Tries the method's perf event for a moment (`perf record ... -- true`).
fn probe_perf(c: &Capabilities, m: Method) -> Probe {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            return Probe {
                branch_ok: false,
                message: e.to_string(),
            }
        }
    };
    let out = dir.path().join("probe.data");
    let cmd = match perf_record_command(c, m, 10007, &out, &["true".into()], Scope::Command) {
        Ok(c) => c,
        Err(e) => {
            return Probe {
                branch_ok: false,
                message: e,
            }
        }
    };
    let r = std::process::Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdout(std::process::Stdio::null())
        .output();
    match r {
        Ok(o) if o.status.success() => Probe {
            branch_ok: true,
            message: String::new(),
        },
        Ok(o) => Probe {
            branch_ok: false,
            message: String::from_utf8_lossy(&o.stderr)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(3)
                .collect::<Vec<_>>()
                .join(" / "),
        },
        Err(e) => Probe {
            branch_ok: false,
            message: e.to_string(),
        },
    }
}
