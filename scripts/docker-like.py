#!/usr/bin/python3
"""Runs a command the way Docker runs a container's process by default, as
far as containment is concerned: under Docker's default seccomp profile's
refusals of namespaces and mounts, with Docker's default capability set, and
optionally as an unprivileged uid (the Dockerfile's `USER`).

Usage: docker-like.py [--uid N] [--gid N] -- COMMAND [ARGS...]

Why: the seed's deployment is a Docker image, and Hugging Face Spaces,
Kubernetes and every scale-out engine run it in a container where bubblewrap
cannot create its namespaces. CI has no Docker engine, so the tests start
`secaudit serve` under this wrapper to prove the server picks the
namespace-free tier there and stays contained (tests/container.rs).

What it installs (from moby's profiles/seccomp/default.json, the rules that
matter here): unshare, setns, mount, umount2, pivot_root, the new mount API,
`clone` with any CLONE_NEW* flag -> EPERM; clone3 -> ENOSYS (Docker cannot
inspect its flags either). Capabilities: bounded to Docker's default 14
(no CAP_SYS_ADMIN, so no unprivileged-namespace workaround either).
Needs Debian's python3-seccomp (`apt-get install python3-seccomp`), for
/usr/bin/python3.
"""

import errno
import os
import sys

import seccomp

# Docker's default capability set (moby oci/caps/defaults.go).
DOCKER_CAPS = [
    "chown", "dac_override", "fsetid", "fowner", "mknod", "net_raw", "setgid",
    "setuid", "setfcap", "setpcap", "net_bind_service", "sys_chroot", "kill",
    "audit_write",
]

CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000, "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}

DENIED = [
    "unshare", "setns", "mount", "umount2", "pivot_root", "open_tree",
    "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
    "userfaultfd", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct",
]


def main(argv):
    uid = gid = None
    args = list(argv)
    while args and args[0] != "--":
        flag = args.pop(0)
        if flag == "--uid":
            uid = int(args.pop(0))
        elif flag == "--gid":
            gid = int(args.pop(0))
        else:
            sys.exit(f"docker-like: unknown flag {flag}")
    if not args or args[0] != "--" or len(args) < 2:
        sys.exit(__doc__)
    command = args[1:]
    if gid is None and uid is not None:
        gid = uid

    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    # Docker loads the profile with privileges, without no_new_privs.
    f.set_attr(seccomp.Attr.CTL_NNP, 0)
    for name in DENIED:
        f.add_rule(seccomp.ERRNO(errno.EPERM), name)
    for flag in CLONE_NEW.values():
        f.add_rule(seccomp.ERRNO(errno.EPERM), "clone",
                   seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    f.load()

    caps = ",".join(["-all"] + ["+" + c for c in DOCKER_CAPS])
    setpriv = ["/usr/bin/setpriv", f"--bounding-set={caps}", "--inh-caps=-all"]
    if uid is not None:
        setpriv += [f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    os.execv(setpriv[0], setpriv + ["--"] + command)


if __name__ == "__main__":
    main(sys.argv[1:])
