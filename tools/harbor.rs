//! `secaudit export harbor`: writes tasks (canonical and seeded variants)
//! as Harbor task directories, so an evaluation can run on Harbor's
//! scale-out engine instead of this server.
//!
//! One directory per task or variant (`task_01`, `task_01-seed_7`):
//!
//! ```text
//! instruction.md            the task as the agent sees it, and how to act
//! task.toml                 timeouts, resources, metadata, separate verifier
//! environment/Dockerfile    the agent's image: tools + the workspace at /app
//! environment/workspace.tar the workspace exactly as a server's reset hands it
//!                           out (a git repository with its history); nothing else
//! tests/Dockerfile          the verifier's own image (Harbor's separate mode)
//! tests/test.sh             `secaudit grade` on the agent's /app
//! tests/truth.tar           the generated task: truth.json, pristine/, ...
//! tests/secaudit            this binary, which holds the graders
//! solution/solve.sh         the oracle's shell actions, in order
//! solution/actions/NN.sh    one per action
//! ```
//!
//! The verifier runs in a container of its own ([`VERIFIER_MODE`]): Harbor
//! collects `/app` from the agent's container as an artifact and restores it
//! into the verifier's, whose image alone holds the ground truth. So no
//! ground truth is ever in the agent's image or reachable while it runs, and
//! nothing the agent leaves running survives into grading. The reward is
//! the server's own score of the finished workspace (`secaudit grade`,
//! `server::env::finished`), written to `/logs/verifier/reward.{txt,json}`.
//!
//! The verifier image copies the `secaudit` binary exported beside it (the
//! running one, or `--secaudit-bin`; hard-linked when possible, so 13 tasks
//! cost one binary on disk). It links only glibc dynamically, so it must be
//! built against a glibc no newer than the images' Debian bookworm (2.36):
//! a build on bookworm, as the repository's Dockerfile does, qualifies.

use anyhow::{Context, bail};
use server::models::{ScanMode, TaskInfo};
use server::tasks::{TaskDef, generate_task};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Base image of both images: the repository's runtime image's, whose glibc
/// the exported binary is built for.
pub const BASE_IMAGE: &str = "debian:bookworm-slim";
/// Where the workspace is, in the agent's image and the verifier's.
pub const WORKSPACE: &str = "/app";
/// The venv with the project's pinned Python tools (pytest,
/// git-filter-repo), in both images.
pub const VENV: &str = "/opt/secaudit-venv";
/// Where the verifier image holds the generated task.
pub const TRUTH: &str = "/tests/truth";
/// Harbor's verifier mode: its own container, built from tests/Dockerfile.
pub const VERIFIER_MODE: &str = "separate";
/// The unprivileged user the agent runs as (uid 1000).
pub const AGENT_USER: &str = "agent";
/// Harbor organisation of the exported task names (`org/name`).
pub const ORG: &str = "secrets-audit-env";
/// Agent time per unit of the task's step budget: a server step is one
/// command, an agent in a container takes a model turn or more per command.
const AGENT_SECONDS_PER_STEP: u32 = 60;
/// Verifier time: two pytest runs of at most a minute each (pristine
/// manifest, workspace) plus the history search, with room to spare.
const VERIFIER_TIMEOUT_SEC: u32 = 600;
/// Resources of both containers.
const CPUS: u32 = 1;
const MEMORY_MB: u32 = 2048;
const STORAGE_MB: u32 = 4096;

/// The pinned Python tools (`scripts/requirements.txt`, the same pins the
/// server's venv has), as `name==version` arguments.
pub fn python_pins() -> Vec<&'static str> {
    include_str!("../scripts/requirements.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// The exported directory name of a task or variant.
pub fn task_dir_name(slug: &str, seed: Option<u64>) -> String {
    match seed {
        None => slug.to_string(),
        Some(s) => format!("{slug}-seed_{s}"),
    }
}

/// Writes one Harbor task for `def` (canonical, or variant `seed`) into
/// `dir` (which must not exist), using `scratch` for the generated task and
/// `bin` as the verifier's secaudit binary.
pub fn export_task(
    def: &TaskDef,
    seed: Option<u64>,
    dir: &Path,
    scratch: &Path,
    bin: &Path,
) -> anyhow::Result<()> {
    let info = def.task.to_info();
    let gen_dir = scratch.join(task_dir_name(&info.slug, seed));
    let generated = generate_task(def, seed, &gen_dir)
        .with_context(|| format!("generating {} seed {seed:?}", info.slug))?;
    server::env::finished::write_info(&gen_dir, &info)?;

    for sub in ["environment", "tests", "solution/actions"] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    write(dir, "instruction.md", &instruction(&info))?;
    write(dir, "task.toml", &task_toml(&info, seed))?;
    write(
        dir,
        "environment/Dockerfile",
        &environment_dockerfile(&info, seed),
    )?;
    tar_dir(&generated.workspace, &dir.join("environment/workspace.tar"))?;
    write(dir, "tests/Dockerfile", &verifier_dockerfile(&info, seed))?;
    write_exec(dir, "tests/test.sh", &test_sh())?;
    tar_dir(&gen_dir, &dir.join("tests/truth.tar"))?;
    link_or_copy(bin, &dir.join("tests/secaudit"))?;
    write_solution(dir, &generated.oracle)?;
    Ok(())
}

fn write(dir: &Path, rel: &str, text: &str) -> anyhow::Result<()> {
    let p = dir.join(rel);
    std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
}

fn write_exec(dir: &Path, rel: &str, text: &str) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    write(dir, rel, text)?;
    std::fs::set_permissions(dir.join(rel), std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// A tar of everything under `src`, entries relative to it, without
/// timestamps or owners (the same bytes for the same tree), symlinks kept
/// as links. Docker's `ADD` unpacks it.
pub fn tar_dir(src: &Path, dest: &Path) -> anyhow::Result<()> {
    let file =
        std::fs::File::create(dest).with_context(|| format!("creating {}", dest.display()))?;
    let mut b = tar::Builder::new(std::io::BufWriter::new(file));
    b.mode(tar::HeaderMode::Deterministic);
    b.follow_symlinks(false);
    b.append_dir_all(".", src)
        .with_context(|| format!("archiving {}", src.display()))?;
    b.into_inner()?.into_inner().map_err(|e| e.into_error())?;
    Ok(())
}

/// Hard-links `src` to `dest` (same bytes, no extra disk), copying when the
/// two are on different filesystems.
fn link_or_copy(src: &Path, dest: &Path) -> anyhow::Result<()> {
    if std::fs::hard_link(src, dest).is_err() {
        std::fs::copy(src, dest)
            .with_context(|| format!("copying {} to {}", src.display(), dest.display()))?;
    }
    Ok(())
}

/// What the agent reads: the task's description as the server shows it,
/// then how the work is checked and how to act in the container.
pub fn instruction(info: &TaskInfo) -> String {
    let history = match info.scan_mode {
        ScanMode::Git => {
            "This repository's git history counts: a credential left in any commit \
             (or any object still in `.git`) is still a leak, so remove it from the \
             history as well as from the files, keeping the history's other content \
             intact."
        }
        ScanMode::Dir => {
            "The files of the working tree count, including anything you add under \
             `.git`; the existing commits are out of scope, but a new commit that \
             contains a credential is a leak."
        }
    };
    format!(
        "# {title}\n\n\
         {description}\n\n\
         ## How this is checked\n\n\
         When you finish, a separate verifier inspects `{ws}`:\n\n\
         - every planted credential must be gone, in any encoding (plain, \
         base64, hex). {history}\n\
         - introducing a new credential counts as a leak;\n\
         - the project's test suite must pass: its test files are restored from \
         a pristine copy before it runs, so fix the code, not the tests.\n\n\
         The reward is the fraction of credentials removed times the fraction of \
         tests passing; 1.0 means every leak fixed with the suite green.\n\n\
         ## Working here\n\n\
         The repository is at `{ws}` (your working directory). Use the shell: \
         `git`, `git filter-repo`, `python3` and `pytest` (run `pytest -q` in \
         `{ws}`) are installed. There is no network service to call; put \
         placeholders where a real credential would go and read real values \
         from environment variables.\n",
        title = info.title,
        description = info.description,
        ws = WORKSPACE,
    )
}

/// `task.toml`: Harbor's task configuration.
pub fn task_toml(info: &TaskInfo, seed: Option<u64>) -> String {
    let difficulty = serde_plain(&info.difficulty);
    let scan_mode = serde_plain(&info.scan_mode);
    let name = format!(
        "{ORG}/{}",
        task_dir_name(&info.slug, seed).replace('_', "-")
    );
    let mut t = String::new();
    let _ = writeln!(
        t,
        "# SecretsAuditEnv {} ({}), exported by `secaudit export harbor`.",
        info.slug,
        seed.map_or("canonical".to_string(), |s| format!("seed {s}"))
    );
    t.push_str("schema_version = \"1.4\"\n");
    let _ = writeln!(
        t,
        "# The agent's finished workspace, carried into the separate verifier.\n\
         artifacts = [\"{WORKSPACE}\"]\n"
    );
    t.push_str("[task]\n");
    let _ = writeln!(t, "name = {}", toml_str(&name));
    let _ = writeln!(t, "description = {}", toml_str(&info.title));
    let _ = writeln!(
        t,
        "keywords = [\"secrets\", \"security\", \"git\", {}]\n",
        toml_str(&difficulty)
    );
    t.push_str("[metadata]\n");
    let _ = writeln!(t, "difficulty = {}", toml_str(&difficulty));
    t.push_str("category = \"security\"\n");
    let _ = writeln!(
        t,
        "tags = [\"secrets\", \"credential-leak\", \"remediation\", {}]",
        toml_str(&format!("scan-{scan_mode}"))
    );
    let _ = writeln!(t, "secaudit_task_id = {}", info.id);
    let _ = writeln!(t, "secaudit_slug = {}", toml_str(&info.slug));
    if let Some(s) = seed {
        let _ = writeln!(t, "secaudit_seed = {s}");
    }
    let _ = writeln!(t, "scan_mode = {}", toml_str(&scan_mode));
    let _ = writeln!(t, "step_budget = {}", info.step_budget);
    let _ = writeln!(t, "secret_count = {}\n", info.secret_count);
    t.push_str("[verifier]\n");
    let _ = writeln!(t, "timeout_sec = {VERIFIER_TIMEOUT_SEC}.0");
    let _ = writeln!(t, "environment_mode = \"{VERIFIER_MODE}\"\n");
    t.push_str("[verifier.environment]\n");
    t.push_str("# Grading needs no network.\nnetwork_mode = \"no-network\"\n");
    let _ = writeln!(
        t,
        "cpus = {CPUS}\nmemory_mb = {MEMORY_MB}\nstorage_mb = {STORAGE_MB}\n"
    );
    t.push_str("[agent]\n");
    let _ = writeln!(
        t,
        "timeout_sec = {}.0",
        info.step_budget.max(1) * AGENT_SECONDS_PER_STEP
    );
    let _ = writeln!(t, "user = \"{AGENT_USER}\"\n");
    t.push_str("[environment]\nbuild_timeout_sec = 600.0\n");
    let _ = writeln!(
        t,
        "cpus = {CPUS}\nmemory_mb = {MEMORY_MB}\nstorage_mb = {STORAGE_MB}"
    );
    let _ = writeln!(t, "workdir = \"{WORKSPACE}\"");
    t
}

/// A value's serde name (`"easy"`, `"git"`).
fn serde_plain<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A TOML basic string (JSON's escapes are valid TOML escapes).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// The apt packages and venv both images share.
fn base_layers(t: &mut String, apt: &str) {
    let _ = writeln!(t, "FROM {BASE_IMAGE}");
    let _ = writeln!(
        t,
        "RUN apt-get update \\\n \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\\n      \
         {apt} \\\n \
         && rm -rf /var/lib/apt/lists/*"
    );
    let _ = writeln!(
        t,
        "# The server's pinned Python tools (scripts/requirements.txt).\n\
         RUN python3 -m venv {VENV} \\\n \
         && {VENV}/bin/pip install --no-cache-dir {} \\\n \
         && chmod -R a+rX {VENV}",
        python_pins().join(" ")
    );
}

/// The agent's image: the workspace and the tools its commands use, as in
/// a server's sandbox; no ground truth (the build context is only this
/// Dockerfile and workspace.tar).
pub fn environment_dockerfile(info: &TaskInfo, seed: Option<u64>) -> String {
    let mut t = format!(
        "# SecretsAuditEnv {} ({}): the agent's image. It holds the task's workspace\n\
         # exactly as the environment server hands it to an agent at reset (a git\n\
         # repository with its history, from workspace.tar) and the tools agent\n\
         # commands use there. No ground truth: that is only in the verifier's image\n\
         # (tests/Dockerfile), which Harbor builds separately.\n",
        info.slug,
        seed.map_or("canonical".to_string(), |s| format!("seed {s}"))
    );
    base_layers(&mut t, "bash ca-certificates curl git python3 python3-venv");
    let _ = writeln!(
        t,
        "# Reachable from login shells too, whose PATH is /etc/profile's.\n\
         RUN ln -s {VENV}/bin/pytest {VENV}/bin/git-filter-repo /usr/local/bin/ \\\n \
         && git config --system safe.directory '*' \\\n \
         && useradd --create-home --uid 1000 {AGENT_USER}\n\
         ADD workspace.tar {WORKSPACE}/\n\
         RUN chown -R {AGENT_USER}:{AGENT_USER} {WORKSPACE}\n\
         # The server sandbox's environment for agent commands.\n\
         ENV PATH={VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\\n    \
         LANG=C.UTF-8 \\\n    \
         PYTHONDONTWRITEBYTECODE=1 \\\n    \
         GIT_PAGER=cat \\\n    \
         GIT_TERMINAL_PROMPT=0 \\\n    \
         GIT_AUTHOR_NAME=Agent \\\n    \
         GIT_AUTHOR_EMAIL=agent@sandbox.invalid \\\n    \
         GIT_COMMITTER_NAME=Agent \\\n    \
         GIT_COMMITTER_EMAIL=agent@sandbox.invalid\n\
         WORKDIR {WORKSPACE}"
    );
    t
}

/// The verifier's image (Harbor's separate mode): secaudit, the generated
/// task and the venv its health grader runs pytest from. It runs as root so
/// the sandbox can drop the suite to an unprivileged uid of its own.
pub fn verifier_dockerfile(info: &TaskInfo, seed: Option<u64>) -> String {
    let mut t = format!(
        "# SecretsAuditEnv {} ({}): the verifier's image. Harbor restores the agent's\n\
         # {WORKSPACE} into it (task.toml's artifacts) and runs /tests/test.sh, which grades\n\
         # with secaudit's own graders against the generated task in {TRUTH}.\n\
         # Under Docker's default seccomp profile bubblewrap cannot create\n\
         # namespaces; secaudit then contains the health suite with Landlock +\n\
         # seccomp, and refuses to grade (no reward) if neither tier works.\n",
        info.slug,
        seed.map_or("canonical".to_string(), |s| format!("seed {s}"))
    );
    base_layers(
        &mut t,
        "bash bubblewrap ca-certificates git python3 python3-venv",
    );
    let _ = writeln!(
        t,
        "COPY secaudit /usr/local/bin/secaudit\n\
         ADD truth.tar {TRUTH}/\n\
         COPY test.sh /tests/test.sh\n\
         RUN chmod 0755 /usr/local/bin/secaudit /tests/test.sh\n\
         WORKDIR /tests"
    );
    t
}

/// The verifier script: `secaudit grade`, which writes the reward.
pub fn test_sh() -> String {
    format!(
        "#!/bin/bash\n\
         # Grades the agent's finished {WORKSPACE} with SecretsAuditEnv's own graders (the\n\
         # environment server's grading pass and score) and writes\n\
         # /logs/verifier/reward.txt and reward.json. With no containment tier for the\n\
         # health suite it writes no reward and exits 2: Harbor then reports a\n\
         # verifier error, not a score.\n\
         set -u\n\
         mkdir -p /logs/verifier\n\
         exec /usr/local/bin/secaudit grade --truth {TRUTH} --workspace {WORKSPACE} \\\n  \
         --venv {VENV} --reward-dir /logs/verifier\n"
    )
}

/// Structured actions of the server (`inspect_file`, `scan_history`, ...):
/// they only show information and change nothing, so the solution lists
/// them as comments.
fn is_structured(action: &str) -> bool {
    !matches!(
        server::env::actions::parse(action),
        Ok(server::env::actions::Parsed::Bash(_)) | Err(_)
    )
}

/// `solution/solve.sh` and one file per shell action of the oracle, run in
/// order from the workspace as the server runs them (a fresh shell each).
fn write_solution(dir: &Path, oracle: &[String]) -> anyhow::Result<()> {
    let mut s = format!(
        "#!/bin/bash\n\
         # The oracle's solution (oracle.json rendered for this task): each shell action\n\
         # the server's oracle sends, in order, each in a fresh shell in {WORKSPACE}, as the\n\
         # server runs them. Structured actions only show information there and\n\
         # change nothing; they are listed as comments. A failing action does not\n\
         # stop the rest, as in an episode. SECAUDIT_WORKSPACE moves the workspace\n\
         # (tests run this outside the image).\n\
         set -u\n\
         here=$(dirname \"$(readlink -f \"$0\")\")\n\
         cd \"${{SECAUDIT_WORKSPACE:-{WORKSPACE}}}\" || exit 1\n"
    );
    let mut n = 0;
    for (i, a) in oracle.iter().enumerate() {
        if is_structured(a) {
            let _ = writeln!(s, "# {}: {}", i + 1, a.trim());
            continue;
        }
        n += 1;
        let file = format!("actions/{n:02}.sh");
        write(dir, &format!("solution/{file}"), &format!("{a}\n"))?;
        let _ = writeln!(
            s,
            "bash \"$here/{file}\" || echo \"solve: action {} exited $?\" >&2",
            i + 1
        );
    }
    if n == 0 {
        bail!("the oracle has no shell action");
    }
    s.push_str("exit 0\n");
    write_exec(dir, "solution/solve.sh", &s)
}

/// Where the running binary is, for `--secaudit-bin`'s default.
pub fn current_binary() -> anyhow::Result<PathBuf> {
    std::env::current_exe().context("locating the running secaudit binary")
}
