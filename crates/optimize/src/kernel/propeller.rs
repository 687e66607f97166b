//! The kernel's Propeller profiles: kfdo's `--format propeller --kernel` of a recording
//! of the kernel built with the BB address map (`PROPELLER_CLANG=y`, no profile), written
//! as `OUT/profiles/propeller_cc_profile.txt` and `_ld_profile.txt`, the pair
//! `CLANG_PROPELLER_PROFILE_PREFIX=OUT/profiles/propeller` names.

use super::build::BuiltKernel;
use super::ctx::KernelCtx;
use super::train::KernelRecording;
use crate::steps::cache::Key;
use crate::steps::ProfileFile;

impl KernelCtx {
    /// Returns the prefix (as the profile's path) and the two files' combined hash.
    pub fn kernel_profile_propeller(
        &self,
        k: &BuiltKernel,
        rec: &KernelRecording,
    ) -> anyhow::Result<ProfileFile> {
        let prefix = self.dir("profiles/propeller");
        let (cc, ld) = kfdo_convert::propeller_paths(&prefix);
        let key = Key::new("kernel profile propeller")
            .add("vmlinux", &k.hash)
            .add("perf.data", &rec.hash)
            .add("kfdo", &self.kfdo_hash)
            .finish();
        let outputs = [cc.clone(), ld.clone()];
        let done = self.step("profile propeller", key, &outputs, |log| {
            std::fs::create_dir_all(prefix.parent().unwrap())?;
            let req = kfdo_convert::ProfileRequest {
                kernel: true,
                format: kfdo_convert::OutputFormat::Propeller,
                ..kfdo_convert::ProfileRequest::new(
                    &k.vmlinux,
                    vec![kfdo_convert::Input::PerfData(rec.perf_data.clone())],
                    &prefix,
                )
            };
            let s = kfdo_convert::profile(&req, &mut |_| {}).map_err(|e| log.failed(e))?;
            let p = s
                .propeller
                .as_ref()
                .ok_or_else(|| log.fail("internal: no Propeller summary".into()))?;
            log.say(&format!(
                "kfdo profile --format propeller --kernel: {} samples in vmlinux -> {} of {} mapped \
                 functions hot, {} hot blocks, {} split; ext-TSP score {:.0} -> {:.0}; {} hot \
                 functions share a name and keep their layout",
                s.samples_in_binary(),
                p.hot_functions,
                p.mapped_functions,
                p.hot_blocks,
                p.split_functions,
                p.ext_tsp_score_before,
                p.ext_tsp_score_after,
                p.ambiguous_functions
            ));
            Ok(serde_json::json!({
                "hot_functions": p.hot_functions,
                "split_functions": p.split_functions,
                "score_before": p.ext_tsp_score_before,
                "score_after": p.ext_tsp_score_after,
            }))
        })?;
        Ok(ProfileFile {
            hash: Key::new("propeller profiles")
                .add("cc", done.hash_of(&cc))
                .add("ld", done.hash_of(&ld))
                .finish(),
            path: prefix,
        })
    }
}
