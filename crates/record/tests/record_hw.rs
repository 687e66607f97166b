//! Hardware-path detection and perf command construction, from the machine fixtures in
//! tests/fixtures/hw (see record-fixture.sh and synthesize-fixtures.sh there).

use kfdo_record::hardware::{
    perf_record_command, shell_words, Capabilities, Method, Scope, Vendor,
};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> Capabilities {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hw")
        .join(name);
    assert!(root.join("proc/cpuinfo").exists(), "fixture {name} missing");
    let mut c = Capabilities::from_root(&root);
    // Tools as on a machine with perf and QEMU installed.
    c.perf = Some(PathBuf::from("perf"));
    c.qemu_user = Some(PathBuf::from("/usr/bin/qemu-x86_64"));
    c.host_x86_64 = c.vendor != Vendor::Arm;
    c
}

fn cmd(c: &Capabilities, m: Method, scope: Scope) -> String {
    shell_words(
        &perf_record_command(
            c,
            m,
            500009,
            Path::new("perf.data"),
            &["./bench".into()],
            scope,
        )
        .unwrap(),
    )
}

#[test]
fn intel_legacy_lbr() {
    let c = fixture("intel-skylake-lbr");
    assert_eq!(c.vendor, Vendor::Intel);
    assert_eq!(c.branch_depth, Some(32));
    assert_eq!(c.pmu_name.as_deref(), Some("skylake"));
    assert_eq!(c.hardware_candidate(), Some(Method::Lbr));
    assert_eq!(c.choose_auto().0, Method::Lbr);
    assert_eq!(
        cmd(&c, Method::Lbr, Scope::Command),
        "perf record -e BR_INST_RETIRED.NEAR_TAKEN -b -c 500009 -o perf.data -- ./bench"
    );
    // The kernel's AutoFDO guide: perf record -e BR_INST_RETIRED.NEAR_TAKEN:k -a -N -b -c N
    assert_eq!(
        cmd(&c, Method::Lbr, Scope::SystemKernel(10.0)),
        "perf record -e BR_INST_RETIRED.NEAR_TAKEN:k -b -c 500009 -a -N -o perf.data -- sleep 10"
    );
}

#[test]
fn intel_arch_lbr() {
    let c = fixture("intel-sapphirerapids-arch-lbr");
    assert!(c.flags.iter().any(|f| f == "arch_lbr"));
    assert_eq!(c.hardware_candidate(), Some(Method::Lbr));
    assert!(c.usable(Method::Brs).is_err());
}

#[test]
fn amd_brs_and_lbr_v2() {
    let z3 = fixture("amd-zen3-brs");
    assert_eq!(z3.vendor, Vendor::Amd);
    assert_eq!(z3.hardware_candidate(), Some(Method::Brs));
    assert_eq!(
        cmd(&z3, Method::Brs, Scope::Command),
        "perf record -e cpu/event=0xc4,umask=0x0/ -b -c 500009 -o perf.data -- ./bench"
    );
    let z4 = fixture("amd-zen4-lbrv2");
    assert_eq!(z4.hardware_candidate(), Some(Method::LbrV2));
    assert_eq!(
        cmd(&z4, Method::LbrV2, Scope::SystemKernel(5.0)),
        "perf record -e cpu/event=0xc4,umask=0x0/k -b -c 500009 -a -N -o perf.data -- sleep 5"
    );
    let why = z4.usable(Method::Lbr).unwrap_err();
    assert!(why.contains("Intel"), "{why}");
}

#[test]
fn arm_spe_and_brbe() {
    let spe = fixture("arm-neoverse-n1-spe");
    assert_eq!(spe.vendor, Vendor::Arm);
    assert_eq!(spe.hardware_candidate(), Some(Method::Spe));
    assert!(cmd(&spe, Method::Spe, Scope::Command)
        .starts_with("perf record -e arm_spe_0/branch_filter=1"));
    assert!(spe.usable(Method::Brbe).unwrap_err().contains("BRBE"));
    // Emulation needs an x86-64 host.
    assert!(spe.usable(Method::Emulated).unwrap_err().contains("x86-64"));
    let brbe = fixture("arm-neoverse-v3-brbe");
    assert_eq!(brbe.branch_depth, Some(64));
    assert!(brbe.usable(Method::Brbe).is_ok());
    assert_eq!(
        cmd(&brbe, Method::Brbe, Scope::Command),
        "perf record -e BR_RETIRED -j any,save_type -c 500009 -o perf.data -- ./bench"
    );
}

#[test]
fn vm_without_pmu_falls_back_to_emulation_then_ip() {
    let mut c = fixture("vm-intel-no-pmu");
    assert!(c.hypervisor);
    assert_eq!(c.hardware_candidate(), None);
    let (m, steps) = c.choose_auto();
    assert_eq!(m, Method::Emulated);
    assert!(
        steps[0].contains("virtual machine") && steps[0].contains("no hardware core PMU"),
        "{steps:?}"
    );
    c.qemu_user = None;
    let (m, steps) = c.choose_auto();
    assert_eq!(m, Method::Ip);
    assert!(
        steps.iter().any(|s| s.contains("qemu-x86_64 not found")),
        "{steps:?}"
    );
    assert_eq!(
        cmd(&c, Method::Ip, Scope::Command),
        "perf record -e cpu-clock -c 500009 -o perf.data -- ./bench"
    );
}

#[test]
fn paranoid_and_failed_probe_are_explained() {
    let mut c = fixture("intel-skylake-lbr");
    c.perf_event_paranoid = Some(3);
    assert!(c
        .usable(Method::Lbr)
        .unwrap_err()
        .contains("perf_event_paranoid is 3"));
    c.is_root = true;
    c.probe = Some(kfdo_record::hardware::Probe {
        branch_ok: false,
        message: "PMU Hardware doesn't support sampling/overflow-interrupts".into(),
    });
    let why = c.usable(Method::Lbr).unwrap_err();
    assert!(why.contains("overflow-interrupts"), "{why}");
    assert_eq!(c.choose_auto().0, Method::Emulated);
}

/// perf ran, but the recording holds no sample (the command was shorter than one period):
/// an error naming the file and `--period`, and the empty perf.data is removed.
#[test]
fn a_hardware_recording_without_samples_is_an_error_and_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("perf.data");
    // What perf leaves for a run without samples: the header and the attr, no SAMPLE.
    let attr = kfdo_perf::EventAttr::new(4, 0x20c4, 1 << 40);
    kfdo_perf::PerfWriter::create(&data, vec![attr])
        .unwrap()
        .finish()
        .unwrap();
    // The "perf" run itself: a command that leaves the file as it is.
    let cmd = ["true".into()];
    let e = kfdo_record::hardware::run_perf_checked(
        &cmd,
        Method::Lbr,
        &data,
        1 << 40,
        &kfdo_record::ChildSetup::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, kfdo_record::Error::NoSamples { path, period } if path == &data && *period == 1 << 40),
        "{e:?}"
    );
    assert!(e.to_string().contains("--period 1099511627776"), "{e}");
    assert!(!data.exists(), "the empty recording is removed");
}
