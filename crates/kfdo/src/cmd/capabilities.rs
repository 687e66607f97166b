//! `kfdo capabilities`: what this machine can record, and why not.

use crate::output::Global;
use kfdo_record::hardware::{Capabilities, Method};
use kfdo_toolchain::Llvm;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Read the machine description under this directory (proc/cpuinfo,
    /// sys/bus/event_source/devices, ...) instead of this machine; no live probe.
    #[arg(long, value_name = "DIR", hide = true)]
    root: Option<PathBuf>,
}

/// `kfdo capabilities --json`.
#[derive(serde::Serialize)]
struct Summary<'a> {
    machine: &'a Capabilities,
    methods: Vec<MethodSummary<'a>>,
    auto: &'static str,
    auto_steps: &'a [String],
    kvm: KvmSummary<'a>,
    llvm: LlvmSummary<'a>,
}

/// Whether one recording method works here, and why not.
#[derive(serde::Serialize)]
struct MethodSummary<'a> {
    method: &'static str,
    available: bool,
    why_not: Option<&'a String>,
}

/// Whether kernels can boot under KVM here (a vCPU ran a test guest).
#[derive(serde::Serialize)]
struct KvmSummary<'a> {
    works: bool,
    why_not: Option<&'a str>,
    probe: &'a kfdo_record::kvm::KvmStatus,
}

/// The LLVM releases kfdo knows, the default, and those installed.
#[derive(serde::Serialize)]
struct LlvmSummary<'a> {
    default: u32,
    known: Vec<u32>,
    installed: &'a [kfdo_toolchain::Installed],
}

pub fn run(a: Args, _g: &Global) -> anyhow::Result<i32> {
    let caps = match &a.root {
        Some(r) => {
            let mut c = Capabilities::from_root(r);
            // Tools as on this machine.
            let here = Capabilities::detect();
            c.perf = here.perf;
            c.qemu_user = here.qemu_user;
            c.qemu_system = here.qemu_system;
            c.qemu_user_aarch64 = here.qemu_user_aarch64;
            c.qemu_system_aarch64 = here.qemu_system_aarch64;
            c.host_x86_64 = here.host_x86_64;
            c.is_root = here.is_root;
            c
        }
        None => Capabilities::detect(),
    };
    let methods: Vec<(Method, Result<(), String>)> = Method::all()
        .into_iter()
        .map(|m| (m, caps.usable(m)))
        .collect();
    let (auto, steps) = caps.choose_auto();
    // Probed live even with --root: it is this machine's device, not a described one.
    let kvm = kfdo_record::kvm::probe(std::time::Duration::from_secs(5));
    let llvm = kfdo_toolchain::installed();
    if a.json {
        crate::json_out::print_summary(&Summary {
            machine: &caps,
            methods: methods
                .iter()
                .map(|(m, r)| MethodSummary {
                    method: m.name(),
                    available: r.is_ok(),
                    why_not: r.as_ref().err(),
                })
                .collect(),
            auto: auto.name(),
            auto_steps: &steps,
            kvm: KvmSummary {
                works: kvm.works(),
                why_not: kvm.why_not(),
                probe: &kvm,
            },
            llvm: LlvmSummary {
                default: Llvm::DEFAULT.major,
                known: Llvm::KNOWN.iter().map(|l| l.major).collect(),
                installed: &llvm,
            },
        })?;
        return Ok(0);
    }
    println!(
        "CPU: {} ({:?}{})",
        if caps.model_name.is_empty() {
            "unknown"
        } else {
            &caps.model_name
        },
        caps.vendor,
        if caps.hypervisor {
            ", virtual machine"
        } else {
            ""
        }
    );
    println!(
        "PMUs: {}",
        if caps.pmus.is_empty() {
            "none".to_string()
        } else {
            caps.pmus.join(", ")
        }
    );
    if let Some(d) = caps.branch_depth {
        println!("branch records per sample (caps/branches): {d}");
    }
    println!(
        "perf_event_paranoid: {}   kptr_restrict: {}   root: {}",
        caps.perf_event_paranoid
            .map_or("?".into(), |v| v.to_string()),
        caps.kptr_restrict.map_or("?".into(), |v| v.to_string()),
        caps.is_root
    );
    println!();
    for (m, r) in &methods {
        match r {
            Ok(()) => println!("  {:<9} yes", m.name()),
            Err(why) => println!("  {:<9} no: {why}", m.name()),
        }
    }
    println!();
    println!(
        "emulated guests (the architecture comes from the program's ELF header, the kernel's \
         vmlinux or boot header):"
    );
    for (arch, what, found, package) in caps.emulators() {
        match found {
            Some(p) => println!("  {arch:<8} {what:<9} {}", p.display()),
            None => println!("  {arch:<8} {what:<9} no emulator (apt-get install {package})"),
        }
    }
    println!();
    match kvm.why_not() {
        None => println!("kernels under KVM: yes (a vCPU ran a test guest)"),
        Some(why) => println!(
            "kernels under KVM: no: {why}; kernels boot under QEMU's emulation (TCG), where time \
             is emulated"
        ),
    }
    println!();
    print_llvm(&llvm);
    println!();
    println!("kfdo record --method auto would use: {}", auto.name());
    for s in steps {
        println!("  - {s}");
    }
    Ok(0)
}

/// The LLVM releases installed, which one `kfdo optimize` uses by default, and what a
/// release lacks of the tools kfdo runs.
fn print_llvm(installed: &[kfdo_toolchain::Installed]) {
    println!(
        "LLVM releases (kfdo optimize --llvm N; default {}, tested with {}):",
        Llvm::DEFAULT.major,
        Llvm::KNOWN
            .iter()
            .map(|l| l.major.to_string())
            .collect::<Vec<_>>()
            .join(" and ")
    );
    if installed.is_empty() {
        println!(
            "  none (apt-get install {})",
            Llvm::DEFAULT.packages().join(" ")
        );
    }
    for i in installed {
        let tested = if i.known { "" } else { ", not tested by kfdo" };
        let version = i.version.as_deref().unwrap_or("version unknown");
        if i.complete() {
            println!("  {:<3} {version}{tested}: every tool kfdo runs", i.major);
        } else {
            println!(
                "  {:<3} {version}{tested}: lacks {} (apt-get install {})",
                i.major,
                i.missing.join(", "),
                Llvm::new(i.major).packages().join(" ")
            );
        }
    }
    for k in Llvm::KNOWN {
        if !installed.iter().any(|i| i.major == k.major) {
            println!(
                "  {:<3} not installed (apt-get install {})",
                k.major,
                k.packages().join(" ")
            );
        }
    }
}
