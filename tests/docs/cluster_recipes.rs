//! The cluster recipes README.md and docs/sweep.md show are the files scripts/slurm-ci.sh
//! runs (issue 36): the Slurm job-array script is `scripts/slurm-sweep.sbatch`, the Kubernetes
//! Indexed Job is `scripts/k8s-sweep-job.yaml`, shown byte for byte, so what the docs say is
//! what CI submits to Slurm and validates against the Kubernetes schema.

use std::path::Path;

fn repo(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The first fenced block opened with "````info`" after the line `heading` in `doc`.
fn block_after(doc: &str, file: &str, heading: &str, info: &str) -> String {
    let mut lines = doc.lines().skip_while(|l| l.trim_end() != heading);
    assert!(lines.next().is_some(), "{file}: no heading {heading:?}");
    let fence = format!("```{info}");
    let mut lines = lines.skip_while(|l| l.trim_end() != fence);
    assert!(lines.next().is_some(), "{file}: no {fence} block after {heading:?}");
    let mut text = String::new();
    for l in lines.by_ref() {
        if l.starts_with("```") {
            return text;
        }
        text.push_str(l);
        text.push('\n');
    }
    panic!("{file}: the {fence} block after {heading:?} is not closed");
}

#[test]
fn the_docs_show_the_slurm_script_ci_submits() {
    let script = repo("scripts/slurm-sweep.sbatch");
    for (file, heading) in [("README.md", "#### Slurm job array"), ("docs/sweep.md", "### Slurm job array")] {
        let shown = block_after(&repo(file), file, heading, "sh");
        assert!(
            shown == script,
            "{file}'s Slurm block differs from scripts/slurm-sweep.sbatch; show the file as it is"
        );
    }
}

#[test]
fn the_docs_show_the_kubernetes_job_ci_validates() {
    let manifest = repo("scripts/k8s-sweep-job.yaml");
    for (file, heading) in
        [("README.md", "#### Kubernetes Indexed Job"), ("docs/sweep.md", "### Kubernetes Indexed Job")]
    {
        let shown = block_after(&repo(file), file, heading, "yaml");
        assert!(
            shown == manifest,
            "{file}'s Kubernetes block differs from scripts/k8s-sweep-job.yaml; show the file as it is"
        );
    }
}

#[test]
fn the_slurm_script_shards_as_many_ways_as_its_array_has_tasks() {
    // `--array=0-7` runs 8 tasks; the script's default shard count must be 8, or some runs
    // would belong to no task (fewer) or shards would never run (more).
    let script = repo("scripts/slurm-sweep.sbatch");
    let array = script.lines().find_map(|l| l.strip_prefix("#SBATCH --array=")).expect("an #SBATCH --array line");
    let (from, to) = array.split_once('-').expect("--array=A-B");
    let tasks = to.parse::<u64>().unwrap() - from.parse::<u64>().unwrap() + 1;
    assert_eq!(from, "0", "shards count from 0");
    assert!(script.contains(&format!("N=${{SHARDS:-{tasks}}}")), "the default N is not the array's {tasks} tasks");
    let k8s = repo("scripts/k8s-sweep-job.yaml");
    assert!(k8s.contains("completions: 8") && k8s.contains("/8\n"), "the Job's 8 completions are its shards");
}
