//! The namespace-free tier's confinement: a Landlock ruleset and seccomp
//! filters, built in the server and applied by each command's process
//! right before it execs bash ([`sys::ChildSetup`]).
//!
//! Why this tier exists: inside a container started with Docker's default
//! seccomp profile (and so on Hugging Face Spaces, in Kubernetes pods and
//! on every scale-out engine that runs the image) `unshare`, `mount` and
//! namespace-creating `clone`s are refused, so bubblewrap cannot start.
//! Landlock (an unprivileged LSM, allowed by that profile) and a seccomp
//! filter need no namespaces; together with a per-command uid (when the
//! server is root) and a supervising subreaper they give the guarantees of
//! the bwrap tier:
//!
//! - filesystem: `/usr`, the venv, the loader cache, `/etc/alternatives`,
//!   and a few `/dev` nodes readable (not `/proc`: see [`READ_PATHS`]); the workspace and a
//!   per-command scratch directory (HOME, TMPDIR) writable; nothing else
//!   reachable: not the data dir, the tasks, other sessions, the server's
//!   files. Landlock does not hide paths, it refuses access to them.
//! - network: every `socket(2)` refused by seccomp (`socketpair` for
//!   local pipes stays); Landlock's TCP bind/connect rules (ABI 4) and
//!   abstract-unix-socket scoping (ABI 6) are layered on where the kernel
//!   has them.
//! - processes: ptrace, `process_vm_*`, `pidfd_getfd`, keyrings, bpf,
//!   perf, mounts, namespaces, module loading, io_uring (whose operations
//!   bypass seccomp) and the other calls a command has no business making
//!   are refused; Landlock (ABI 6) also scopes signals, so a command that
//!   shares the server's uid cannot signal it or its supervisor, and
//!   Landlock's ptrace hook keeps `/proc/PID/{mem,environ,fd,...}` of
//!   processes outside the command's domain closed.
//!
//! The kernel's Landlock ABI is used up to the newest this crate knows
//! ([`TARGET_ABI`]); what is in force is reported ([`Landlock::abi`]).

use super::SYSTEM_ETC;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::{SandboxConfig, sys};

/// The newest Landlock ABI whose rights are requested (best effort: a
/// kernel with an older ABI enforces what it has).
const TARGET_ABI: ABI = ABI::V6;

/// Read-only system paths a command needs: binaries and libraries, a
/// few devices, and [`SYSTEM_ETC`] (added where the rules are made). Missing
/// ones are skipped (a merged-/usr system has `/bin` as a symlink into
/// `/usr`). Not `/proc`: without a pid namespace it is the host's (every
/// process's command line, other sessions' included), and Landlock can
/// grant it only whole; so `/proc/self` and `/dev/fd` (bash's process
/// substitution) are unavailable in this tier.
const READ_PATHS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
];

/// Device nodes a command may write (discarding output).
const WRITE_DEVICES: &[&str] = &["/dev/null"];

/// Syscalls refused outright (EPERM). Each is either a way out of the
/// confinement (mounts, namespaces, ptrace and cross-process memory or fd
/// access, io_uring), a way to reach the kernel's attack surface that no
/// shell command needs (bpf, perf, keyrings, userfaultfd, modules), or a
/// host-wide effect (clock, swap, reboot, accounting).
const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
    libc::SYS_kcmp,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_name_to_handle_at,
    libc::SYS_open_by_handle_at,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_syslog,
    libc::SYS_fanotify_init,
    libc::SYS_iopl,
    libc::SYS_ioperm,
    libc::SYS_vhangup,
    libc::SYS_lookup_dcookie,
    // Every socket: no network of any family (AF_INET/6, NETLINK,
    // PACKET, VSOCK, ...), and no Unix socket either: a pathname socket
    // is reached through path resolution, which Landlock does not
    // restrict before ABI 9, so the server's or the host's sockets would
    // be in reach. socketpair(2) (asyncio's self-pipe) stays.
    libc::SYS_socket,
];

/// Syscalls refused (EPERM) wherever processes of one uid and one set of
/// namespaces outlive each other's work: this tier (every command shares
/// the IPC namespace and uid of the server or of its pool) and the health
/// runner's sandbox (every run shares its namespaces and uid). Objects
/// they make outlive the process that made them and are reachable by
/// the next one.
const SHARED_UID_DENIED: &[i64] = &[
    // Keyrings: the user keyring lives as long as the uid's namespace.
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    // System V IPC: segments, queues and semaphores outlive the command
    // (memory the watchdog never sees) and are shared with every later
    // one (red team, issue 16; again of the health runner, issue 21).
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmdt,
    libc::SYS_shmctl,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_semctl,
    // POSIX message queues: the same, in the IPC namespace's own mqueue
    // file system, which Landlock does not cover (red team, issue 21).
    libc::SYS_mq_open,
    libc::SYS_mq_unlink,
    libc::SYS_mq_timedsend,
    libc::SYS_mq_timedreceive,
    libc::SYS_mq_notify,
    libc::SYS_mq_getsetattr,
    // Acting on another process's memory.
    libc::SYS_process_madvise,
    libc::SYS_process_mrelease,
    // io_uring: a second way into most of the calls a filter refuses by
    // number (IORING_OP_SETXATTR set a default ACL past the runner's
    // filter; red team of the health runner, issue 21).
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
];

/// Refused in the health runner's sandbox only: changing the extended
/// attributes (POSIX ACLs included) or inode flags of a file. The runner's
/// bound directories are emptied between runs but are the same inodes,
/// so a default ACL set on `/grader-out` made every later run fail (red
/// team, issue 21). Agent commands keep them: their workspace is theirs.
const ATTR_WRITES: &[i64] = &[
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    // setxattrat(2), removexattrat(2) (Linux 6.13; not in libc yet).
    463,
    466,
];

/// `ioctl(2)` requests refused with [`ATTR_WRITES`]: FS_IOC_SETFLAGS
/// (`chattr`), FS_IOC_FSSETXATTR and FS_IOC_SET_ENCRYPTION_POLICY (an
/// fscrypt policy on a bound directory would outlive its emptying), as
/// their 64-bit values.
const ATTR_IOCTLS: &[u64] = &[0x4008_6602, 0x401c_5820, 0x800c_6613];

/// Namespace flags a `clone(2)` may not carry (a new namespace is a new
/// view of the system, and a user namespace re-grants capabilities).
const CLONE_NAMESPACES: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

/// Calls that act on a process named by an argument, and which argument
/// (0-based) holds it: allowed only on the caller itself (0). Landlock
/// scopes signals and ptrace, not these; where commands share the
/// server's uid, `prlimit(server, RLIMIT_NOFILE, 16)` or `RLIMIT_CPU`
/// broke the server for good and `setpriority`/`sched_setaffinity`/
/// `ioprio_set` starved it (red team, issue 16). Refused for every other
/// target, the command's own children included (no shell command needs
/// to renice or re-limit another process).
const SELF_ONLY: &[(i64, u8)] = &[
    (libc::SYS_prlimit64, 0),
    (libc::SYS_setpriority, 1),
    (libc::SYS_sched_setaffinity, 0),
    (libc::SYS_sched_setscheduler, 0),
    (libc::SYS_sched_setparam, 0),
    (libc::SYS_sched_setattr, 0),
    (libc::SYS_ioprio_set, 1),
    (libc::SYS_migrate_pages, 0),
    (libc::SYS_move_pages, 0),
];

/// `setpriority(which, ...)`/`ioprio_set(which, ...)` with a `which` other
/// than the process itself reach a whole group or every process of the
/// uid (`PRIO_USER`, 0 = the caller's uid): refused. The values that
/// name one process: PRIO_PROCESS (0) and IOPRIO_WHO_PROCESS (1).
const ONE_PROCESS_WHICH: &[(i64, u64)] = &[(libc::SYS_setpriority, 0), (libc::SYS_ioprio_set, 1)];

/// The tier's probe result: what the kernel enforces, and the filters
/// built once for every command.
#[derive(Debug, Clone)]
pub(super) struct Landlock {
    /// The kernel's Landlock ABI (1..): what is in force is
    /// `min(abi, TARGET_ABI)`.
    pub abi: u32,
    /// The seccomp programs, installed in order by each command.
    pub filters: Arc<Vec<BpfProgram>>,
}

impl Landlock {
    /// Checks that the kernel has Landlock and builds the seccomp filters.
    pub(super) fn probe() -> Result<Landlock, String> {
        let abi = sys::landlock_abi();
        if abi < 1 {
            return Err(format!(
                "the kernel has no Landlock (landlock_create_ruleset: {})",
                std::io::Error::from_raw_os_error(-abi)
            ));
        }
        Ok(Landlock {
            abi: abi as u32,
            filters: Arc::new(filters()?),
        })
    }

    /// The ABI in force: the kernel's, capped at what is requested.
    pub(super) fn abi_in_force(&self) -> u32 {
        self.abi.min(TARGET_ABI as u32)
    }

    /// A ruleset for one command, as an fd for `landlock_restrict_self`
    /// in the child: read (and execute) [`READ_PATHS`] and the venv, write
    /// `rw` (the workspace, the scratch dir, extra read-write binds) and
    /// [`WRITE_DEVICES`], read `ro` (extra read-only binds). Every access
    /// right of the ABI is handled, so anything not granted is refused:
    /// TCP bind and connect included (ABI 4+, no rule grants a port), and
    /// abstract Unix sockets and signals are scoped to the command's own
    /// processes (ABI 6+).
    pub(super) fn ruleset(
        &self,
        cfg: &SandboxConfig,
        rw: &[PathBuf],
        ro: &[PathBuf],
    ) -> Result<OwnedFd, String> {
        let err = |e: landlock::RulesetError| format!("landlock ruleset: {e}");
        let read = AccessFs::from_read(TARGET_ABI);
        let all = AccessFs::from_all(TARGET_ABI);
        let existing = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
            paths.into_iter().filter(|p| p.exists()).collect()
        };
        let mut read_paths: Vec<PathBuf> = READ_PATHS
            .iter()
            .chain(SYSTEM_ETC)
            .map(PathBuf::from)
            .collect();
        read_paths.push(cfg.venv.clone());
        read_paths.extend(ro.iter().cloned());
        let mut write_paths: Vec<PathBuf> = WRITE_DEVICES.iter().map(PathBuf::from).collect();
        write_paths.extend(rw.iter().cloned());
        let created = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(all)
            .map_err(err)?
            .handle_access(AccessNet::from_all(TARGET_ABI))
            .map_err(err)?
            .scope(Scope::from_all(TARGET_ABI))
            .map_err(err)?
            .create()
            .map_err(err)?
            .add_rules(path_beneath_rules(existing(read_paths), read))
            .map_err(err)?
            .add_rules(path_beneath_rules(existing(write_paths), all))
            .map_err(err)?;
        let fd: Option<OwnedFd> = created.into();
        fd.ok_or_else(|| "landlock: the kernel enforces no ruleset".to_string())
    }
}

/// [`SELF_ONLY`]'s rules: each call matches (and is refused) when it
/// names a process other than the caller.
fn self_only_rules() -> Result<Vec<(i64, Vec<SeccompRule>)>, String> {
    let err = |e: seccompiler::BackendError| format!("seccomp filter: {e}");
    let mut out = Vec::new();
    for &(nr, arg) in SELF_ONLY {
        let mut r = vec![
            SeccompCondition::new(arg, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)
                .and_then(|c| SeccompRule::new(vec![c]))
                .map_err(err)?,
        ];
        if let Some(&(_, which)) = ONE_PROCESS_WHICH.iter().find(|(n, _)| *n == nr) {
            r.push(
                SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, which)
                    .and_then(|c| SeccompRule::new(vec![c]))
                    .map_err(err)?,
            );
        }
        out.push((nr, r));
    }
    Ok(out)
}

/// The health runner's program ([`super::Service`]), built once, as the
/// raw `sock_filter` array bwrap's `--seccomp` reads: [`SELF_ONLY`],
/// [`SHARED_UID_DENIED`], [`ATTR_WRITES`] and [`ATTR_IOCTLS`] get EPERM,
/// everything else is allowed (the rest of a cold bwrap run's freedom,
/// sockets in its own network namespace included).
pub(super) fn shared_uid_filter() -> Result<&'static [u8], String> {
    static PROGRAM: std::sync::OnceLock<Result<Vec<u8>, String>> = std::sync::OnceLock::new();
    PROGRAM
        .get_or_init(|| {
            let arch = TargetArch::try_from(std::env::consts::ARCH)
                .map_err(|e| format!("seccomp: unsupported architecture: {e:?}"))?;
            let err = |e: seccompiler::BackendError| format!("seccomp filter: {e}");
            let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> = SHARED_UID_DENIED
                .iter()
                .chain(ATTR_WRITES)
                .map(|&nr| (nr, Vec::new()))
                .collect();
            rules.extend(self_only_rules()?);
            let ioctls = ATTR_IOCTLS
                .iter()
                .map(|&req| {
                    SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, req)
                        .and_then(|c| SeccompRule::new(vec![c]))
                        .map_err(err)
                })
                .collect::<Result<Vec<_>, _>>()?;
            rules.insert(libc::SYS_ioctl, ioctls);
            let filter = SeccompFilter::new(
                rules,
                SeccompAction::Allow,
                SeccompAction::Errno(libc::EPERM as u32),
                arch,
            )
            .map_err(err)?;
            let prog = BpfProgram::try_from(filter).map_err(|e| format!("seccomp compile: {e}"))?;
            Ok(prog
                .iter()
                .flat_map(|i| {
                    let mut b = Vec::with_capacity(8);
                    b.extend_from_slice(&i.code.to_ne_bytes());
                    b.push(i.jt);
                    b.push(i.jf);
                    b.extend_from_slice(&i.k.to_ne_bytes());
                    b
                })
                .collect())
        })
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// The seccomp programs: [`DENIED`] and namespace clones get EPERM;
/// `clone3` gets ENOSYS (its flags live in memory a filter cannot read,
/// and ENOSYS makes the C library fall back to `clone`, whose flags it
/// can), as under Docker's default profile.
fn filters() -> Result<Vec<BpfProgram>, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| format!("seccomp: unsupported architecture: {e:?}"))?;
    let err = |e: seccompiler::BackendError| format!("seccomp filter: {e}");
    let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> = DENIED
        .iter()
        .chain(SHARED_UID_DENIED)
        .map(|&nr| (nr, Vec::new()))
        .collect();
    let clone_rules = CLONE_NAMESPACES
        .iter()
        .map(|&flag| {
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    rules.insert(libc::SYS_clone, clone_rules);
    rules.extend(self_only_rules()?);
    let deny = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(err)?;
    let nosys = SeccompFilter::new(
        [(libc::SYS_clone3, Vec::new())].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(err)?;
    [deny, nosys]
        .into_iter()
        .map(|f| BpfProgram::try_from(f).map_err(|e| format!("seccomp compile: {e}")))
        .collect()
}
