// cocode-sandbox: makes the sandbox everything that runs an agent's code runs in (proc/sandbox.h,
// docs/security.md "The sandbox"), then starts the program in it. It takes bubblewrap's options
// — the few a SandboxPlan becomes, each with bubblewrap's meaning — so that one plan's command
// line runs under either program (`"sandbox": "bwrap"` runs it under Debian's bubblewrap).
//
//   cocode-sandbox [--parent-pid PID] [--die-with-parent] [--unshare-pid] [--unshare-ipc]
//                  [--unshare-net] [--net-from-fd FD] [--cap-drop ALL] --ro-bind / / [--dev DEST]
//                  [--proc DEST]
//                  [--tmpfs DEST | --bind SRC DEST | --ro-bind SRC DEST | --ro-bind-try SRC DEST |
//                   --remount-ro DEST]...
//                  -- PROGRAM [ARG]...
//   cocode-sandbox --make-networks N       (descriptor 3: a Unix socket)
//   cocode-sandbox --exec-with-parent PID -- PROGRAM [ARG]...
//   cocode-sandbox --version
//
// `--parent-pid PID` closes the parent-death signal's race: asked for once this process has
// already lost its parent, the kernel never sends it, and the sandbox would run its program
// with nobody left to end it (a dispatcher killed just after it started one). Told who its
// parent is (proc/spawn.cpp tells every sandbox maker it starts itself), it checks, once it has
// asked, that its parent is still that process, and otherwise ends before anything runs.
// `--exec-with-parent PID` does only that for bubblewrap, which has no such option, and starts
// it as the first process of a PID namespace of its own (bubblewrap's own sandbox asks for its
// signal late: see exec_with_parent).
//
// `--make-networks N` makes N network namespaces, each with its loopback up, in one user
// namespace of their own (as root: none), and sends them on descriptor 3; then
// `--unshare-net --net-from-fd FD` gives the sandbox one of them (FD) instead of a new one
// (proc/network_pool.h: a dispatcher gives each to one sandbox at a time). The sandbox's own
// user namespace is made inside theirs, so nothing in it has any capability over its network.
//
// What it makes, always: a PID namespace (it is the namespace's first process, reaping what the
// program leaves; when the program ends it ends, with its exit code, and the kernel ends the
// rest), an IPC and a
// mount namespace of its own, a user namespace mapping only our own user and group (but as
// root, as bubblewrap does), no capability left and no new privilege on exec; and, asked, a
// network namespace with its loopback up. Where bubblewrap builds a new root and binds the host
// into it, this works in the namespace's own copy of the host's mounts with the kernel's mount
// API (Linux 5.12): the whole tree made read-only, nosuid and nodev in one call, each bind one
// clone and one move, no /proc/self/mountinfo read per mount: a start costs a fraction of
// bubblewrap's (docs/performance.md). Every source is taken before anything is mounted, so
// sources are the host's, as bubblewrap's are (a folder bound back from under one that is
// covered). Mounts are private: nothing reaches the host's namespace, nothing of the host's
// later mounts reaches in.
//
// The first process outside waits for the sandbox and exits with its code; a SIGTERM, SIGINT or
// SIGHUP sent to the run's group reaches the program itself, and this process goes on waiting,
// so the program gets its grace; SIGKILL ends this process and, with it (--die-with-parent, a
// parent-death signal), the whole namespace. A failure before the program starts is one line on
// stderr, "cocode-sandbox: …", and exit 1, as bubblewrap's.
//
// Never sanitized, linked statically from no library of cocode's: it starts for every sandboxed
// command, and becomes the first process of every sandbox.
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/nsfs.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge.h"

#ifndef COCODE_VERSION_TEXT
#define COCODE_VERSION_TEXT "cocode-sandbox"
#endif

extern char** environ;

namespace {

[[noreturn]] void fail(const std::string& what, int error) {
    std::fprintf(stderr, "cocode-sandbox: %s: %s\n", what.c_str(), std::strerror(error));
    std::fflush(stderr);
    ::_exit(1);
}
[[noreturn]] void fail(const std::string& what) { fail(what, errno); }

[[noreturn]] void usage(const std::string& what) {
    std::fprintf(stderr, "cocode-sandbox: %s\n", what.c_str());
    std::fflush(stderr);
    ::_exit(1);
}

enum class Kind { bind, ro_bind, tmpfs, dev, proc, remount_ro };

struct Op {
    Kind kind;
    std::string source, dest;
    int tree = -1;          // bind: the source, cloned before anything is mounted (open_tree)
    bool optional = false;  // --ro-bind-try: nothing made where the source does not exist
};

struct Options {
    bool die_with_parent = false;
    pid_t parent = 0;  // --parent-pid: who the parent must still be once the signal is asked
    bool network = false;
    int network_fd = -1;  // --net-from-fd: the network namespace to join
    std::vector<Op> ops;
    std::vector<char*> argv;
};

pid_t pid_named(const std::string& option, const std::string& text) {
    if (text.empty() || text.size() > 9 ||
        text.find_first_not_of("0123456789") != std::string::npos)
        usage(option + ": expected a process id");
    return static_cast<pid_t>(std::stol(text));
}

// Asks for SIGKILL when the parent dies, and ends here if it has already died (the kernel
// sends nothing to a process whose parent went before it asked): `parent` 0 checks nothing.
void die_with(pid_t parent) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail("cannot die with the parent");
    if (parent > 0 && ::getppid() != parent) usage("its parent is gone: nothing is started");
}

Options parse(int argc, char** argv) {
    Options out;
    int i = 1;
    auto value = [&](const char* option) -> std::string {
        if (i + 1 >= argc) usage(std::string(option) + " needs a value");
        return argv[++i];
    };
    for (; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--") break;
        if (a == "--die-with-parent") {
            out.die_with_parent = true;
        } else if (a == "--parent-pid") {
            out.parent = pid_named(a, value("--parent-pid"));
        } else if (a == "--unshare-pid" || a == "--unshare-ipc") {
            // Always: a PID and an IPC namespace of its own.
        } else if (a == "--unshare-net") {
            out.network = true;
        } else if (a == "--net-from-fd") {
            const std::string fd = value("--net-from-fd");
            if (fd.empty() || fd.find_first_not_of("0123456789") != std::string::npos ||
                fd.size() > 4)
                usage("--net-from-fd: expected a descriptor's number");
            out.network_fd = std::stoi(fd);
        } else if (a == "--cap-drop") {
            if (value("--cap-drop") != "ALL") usage("--cap-drop: only ALL is known");
        } else if (a == "--bind" || a == "--ro-bind" || a == "--ro-bind-try") {
            const std::string source = value(a.c_str());
            const std::string dest = value(a.c_str());
            out.ops.push_back({a == "--bind" ? Kind::bind : Kind::ro_bind, source, dest, -1,
                               a == "--ro-bind-try"});
        } else if (a == "--tmpfs" || a == "--dev" || a == "--proc" || a == "--remount-ro") {
            const Kind kind = a == "--tmpfs"  ? Kind::tmpfs
                              : a == "--dev"  ? Kind::dev
                              : a == "--proc" ? Kind::proc
                                              : Kind::remount_ro;
            out.ops.push_back({kind, "", value(a.c_str())});
        } else {
            usage("unknown option " + a);
        }
    }
    if (i + 1 >= argc) usage("expected -- PROGRAM [ARG]... after the options");
    if (out.network_fd >= 0 && !out.network) usage("--net-from-fd needs --unshare-net");
    // The host read-only comes first: everything after is made over it.
    if (out.ops.empty() || out.ops.front().kind != Kind::ro_bind || out.ops.front().source != "/" ||
        out.ops.front().dest != "/")
        usage("the first mount must be --ro-bind / / (the host, read-only)");
    for (int j = i + 1; j < argc; ++j) out.argv.push_back(argv[j]);
    out.argv.push_back(nullptr);
    for (const Op& op : out.ops)
        if (op.dest.empty() || op.dest.front() != '/' ||
            (op.kind <= Kind::ro_bind && op.source.empty()))
            usage("a mount's paths must be absolute: " + op.dest);
    return out;
}

bool write_text(const char* path, const std::string& text) {
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

int set_attributes(int dfd, const char* path, unsigned flags, std::uint64_t set) {
    mount_attr attr{};
    attr.attr_set = set;
    return ::mount_setattr(dfd, path, flags, &attr, sizeof attr);
}

// A missing mount point made, as bubblewrap makes one: its folders, then a folder or an empty
// file like the source. Only where the sandbox can write (a folder of its own just mounted):
// the host is read-only by then.
void make_mount_point(const std::string& dest, bool folder) {
    struct stat st {};
    if (::lstat(dest.c_str(), &st) == 0) return;
    // The folders missing above it, from the first that is there down.
    std::size_t there = dest.rfind('/');
    while (there > 0 && ::lstat(dest.substr(0, there).c_str(), &st) != 0)
        there = dest.rfind('/', there - 1);
    for (std::size_t at = dest.find('/', there + 1); at != std::string::npos;
         at = dest.find('/', at + 1))
        if (::mkdir(dest.substr(0, at).c_str(), 0755) != 0 && errno != EEXIST)
            fail("cannot make the mount point " + dest);
    if (folder ? ::mkdir(dest.c_str(), 0755) != 0
               : ::close(::open(dest.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444)) != 0)
        if (errno != EEXIST) fail("cannot make the mount point " + dest);
}

bool is_folder(int tree) {
    struct stat st {};
    return ::fstat(tree, &st) == 0 && S_ISDIR(st.st_mode);
}

// A tree taken from the host before anything was mounted, put at `dest`.
void attach(int tree, const std::string& source, const std::string& dest) {
    make_mount_point(dest, is_folder(tree));
    if (::move_mount(tree, "", AT_FDCWD, dest.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
        fail("cannot bind " + source + " at " + dest);
    ::close(tree);
}

int clone_tree(const std::string& source) {
    const int tree =
        ::open_tree(AT_FDCWD, source.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (tree < 0) {
        if (errno == ENOSYS) fail("the kernel has no open_tree (Linux 5.12 or later is needed)");
        fail("cannot take " + source);
    }
    return tree;
}

// The whole tree read-only, nosuid, nodev. Where the root is not a mount's (a chroot), the
// tree is first cloned and put over it, and entered.
void host_read_only() {
    const std::uint64_t attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if (set_attributes(AT_FDCWD, "/", AT_RECURSIVE, attrs) == 0) return;
    if (errno == ENOSYS) fail("the kernel has no mount_setattr (Linux 5.12 or later is needed)");
    if (errno != EINVAL) fail("cannot make the host read-only");
    const int tree = clone_tree("/");
    if (::move_mount(tree, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) != 0 ||
        ::fchdir(tree) != 0 || ::chroot(".") != 0)
        fail("cannot take the root's tree");
    ::close(tree);
    if (set_attributes(AT_FDCWD, "/", AT_RECURSIVE, attrs) != 0)
        fail("cannot make the host read-only");
}

// The folders of its own a sandbox gets — each --tmpfs, and /dev as bubblewrap makes it: the
// harmless devices bound from the host's, the standard streams' links, a devpts of its own and
// an empty shm — are folders of one tmpfs, made first at `stage` (a folder the host has in
// every sandbox) and each taken from there (a clone of that folder), then the tmpfs unmounted
// from `stage` again: one file system where bubblewrap mounts one per folder, so less for the
// kernel to make and throw away. One folder's writes are not another's (separate folders).
const char* const kDevices[] = {"null", "zero", "full", "random", "urandom", "tty"};
constexpr const char* kStage = "/proc";

struct OwnFolders {
    std::vector<int> folders;  // one per --tmpfs, in order
    int dev = -1;              // /dev's
};

OwnFolders make_own_folders(std::size_t count, bool dev, bool covered) {
    OwnFolders out;
    if (count == 0 && !dev) return out;
    const std::string stage = kStage;
    if (::mount("tmpfs", kStage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0)
        fail("cannot mount a tmpfs at " + stage);
    for (std::size_t i = 0; i < count; ++i) {
        const std::string folder = stage + "/" + std::to_string(i);
        if (::mkdir(folder.c_str(), 0755) != 0) fail("cannot make " + folder);
        out.folders.push_back(clone_tree(folder));
    }
    if (dev) {
        const std::string dest = stage + "/dev";
        if (::mkdir(dest.c_str(), 0755) != 0) fail("cannot make " + dest);
        for (const char* device : kDevices)
            attach(clone_tree(std::string("/dev/") + device), std::string("/dev/") + device,
                   dest + "/" + device);
        const char* const links[][2] = {
            {"stdin", "/proc/self/fd/0"},  {"stdout", "/proc/self/fd/1"},
            {"stderr", "/proc/self/fd/2"}, {"fd", "/proc/self/fd"},
            {"core", "/proc/kcore"},       {"ptmx", "pts/ptmx"}};
        for (const auto& link : links)
            if (::symlink(link[1], (dest + "/" + link[0]).c_str()) != 0)
                fail("cannot make /dev/" + std::string(link[0]));
        for (const char* folder : {"shm", "pts"})
            if (::mkdir((dest + "/" + folder).c_str(), 0755) != 0)
                fail("cannot make /dev/" + std::string(folder));
        if (::mount("devpts", (dest + "/pts").c_str(), "devpts", MS_NOSUID | MS_NOEXEC,
                    "newinstance,ptmxmode=0666,mode=620") != 0)
            fail("cannot mount a devpts at /dev/pts");
        out.dev = clone_tree(dest);
    }
    // A procfs mounted at `stage` later covers it (nothing then reaches it but through the
    // folders taken); else it goes (an unmount costs the kernel a wait for every CPU).
    if (!covered && ::umount2(kStage, MNT_DETACH) != 0)
        fail("cannot unmount the tmpfs at " + stage);
    return out;
}

// A procfs of the PID namespace, with the parts that reach the kernel itself read-only, always:
// a setting of /proc/sys is the kernel's to write by user id, not by capability (root with none
// still writes kernel.core_pattern, which the kernel then runs on the host), and one of the
// network's (net.*) would stay in the network namespace for the next run given it.
void make_proc(const std::string& dest) {
    make_mount_point(dest, true);
    if (::mount("proc", dest.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
        fail("cannot mount a procfs at " + dest);
    for (const char* part : {"sys", "sysrq-trigger", "irq", "bus"}) {
        const std::string path = dest + "/" + part;
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) continue;  // not in this kernel
        const int tree = clone_tree(path);
        if (set_attributes(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, MOUNT_ATTR_RDONLY) != 0)
            fail("cannot make " + path + " read-only");
        attach(tree, path, path);
    }
}

void loopback_up() {
    const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) fail("no socket for the loopback");
    ifreq request{};
    std::strcpy(request.ifr_name, "lo");
    if (::ioctl(s, SIOCGIFFLAGS, &request) != 0) fail("cannot read the loopback's flags");
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
    if (::ioctl(s, SIOCSIFFLAGS, &request) != 0) fail("cannot bring the loopback up");
    ::close(s);
}

// No capability now nor after exec, none to gain: the bounding and ambient sets emptied, the
// process's own sets cleared, no new privileges (setuid programs stay what they are).
void drop_privileges() {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("cannot forbid new privileges");
    for (int cap = 0; cap <= 63; ++cap)
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
            fail("cannot drop capability " + std::to_string(cap));
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
        fail("cannot clear the ambient capabilities");
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (::syscall(SYS_capset, &header, data) != 0) fail("cannot drop the capabilities");
}

// A user namespace of our own that maps only our user and group (`uid`, `gid`), for the
// process that made it.
bool own_user_mapped(uid_t uid, gid_t gid) {
    return write_text("/proc/self/setgroups", "deny") &&
           write_text("/proc/self/uid_map",
                      std::to_string(uid) + " " + std::to_string(uid) + " 1\n") &&
           write_text("/proc/self/gid_map",
                      std::to_string(gid) + " " + std::to_string(gid) + " 1\n");
}

void map_own_user(uid_t uid, gid_t gid) {
    if (!own_user_mapped(uid, gid)) fail("cannot map its user namespace");
}

// --make-networks N: N network namespaces, loopback up, sent on descriptor 3 together.
int make_networks(const char* count_text) {
    const std::string text = count_text;
    if (text.empty() || text.size() > 3 ||
        text.find_first_not_of("0123456789") != std::string::npos)
        usage("--make-networks: expected a count from 1 to 64");
    const int count = std::stoi(text);
    if (count < 1 || count > 64) usage("--make-networks: expected a count from 1 to 64");
    const uid_t uid = ::getuid();
    if (uid != 0) {
        const gid_t gid = ::getgid();
        if (::unshare(CLONE_NEWUSER) != 0) fail("cannot make a user namespace");
        map_own_user(uid, gid);
    }
    std::vector<int> made;
    for (int i = 0; i < count; ++i) {
        if (::unshare(CLONE_NEWNET) != 0) fail("cannot make a network namespace");
        loopback_up();
        const int fd = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (fd < 0) fail("cannot open its network namespace");
        made.push_back(fd);
    }
    std::vector<char> control(CMSG_SPACE(sizeof(int) * made.size()));
    char byte = 'n';
    iovec data{&byte, 1};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control.data();
    message.msg_controllen = control.size();
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * made.size());
    std::memcpy(CMSG_DATA(header), made.data(), sizeof(int) * made.size());
    if (::sendmsg(3, &message, MSG_NOSIGNAL) != 1) fail("cannot send the network namespaces");
    return 0;
}

// --net-from-fd: into the network namespace `fd` names, through the user namespace that owns
// it (where we hold the capability to join, as its maker's user); as root, directly.
void join_network(int fd, bool own_users) {
    if (own_users) {
        const int owner = ::ioctl(fd, NS_GET_USERNS);
        if (owner < 0) fail("--net-from-fd " + std::to_string(fd) + " is no network namespace");
        if (::setns(owner, CLONE_NEWUSER) != 0) fail("cannot enter its network's user namespace");
        ::close(owner);
    }
    if (::setns(fd, CLONE_NEWNET) != 0) fail("cannot enter the network namespace");
    ::close(fd);
}

// What nothing a sandbox runs needs and what would reach past its namespaces, refused by a
// seccomp filter its program inherits (the same calls Docker's default profile refuses):
//   add_key, request_key, keyctl    a uid's kernel keyrings are the host's for a sandbox
//                                   without a user namespace of its own (as root): EPERM;
//   io_uring_setup/enter/register   its operations (a socket among them) bypass this filter:
//                                   ENOSYS, and the program does without (libuv falls back);
//   socket(AF_VSOCK, …)             a virtual machine's sockets to its host, which a network
//                                   namespace does not enclose: EAFNOSUPPORT;
//   a 32-bit or x32 system call      numbered apart from the checks above: ENOSYS.
#if defined(__x86_64__)
constexpr std::uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
#error "cocode-sandbox: the seccomp filter names this architecture's calls: add it here"
#endif

void refuse_what_reaches_out() {
    constexpr std::uint32_t kX32 = 0x40000000;
    auto errno_of = [](int error) {
        return static_cast<std::uint32_t>(SECCOMP_RET_ERRNO |
                                          (static_cast<std::uint32_t>(error) & SECCOMP_RET_DATA));
    };
    const sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, errno_of(ENOSYS)),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, kX32, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, errno_of(ENOSYS)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_add_key, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_request_key, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_keyctl, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 1, 2),
        BPF_STMT(BPF_RET | BPF_K, errno_of(EPERM)),
        BPF_STMT(BPF_RET | BPF_K, errno_of(ENOSYS)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, errno_of(ENOSYS)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_VSOCK, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, errno_of(EAFNOSUPPORT)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(std::size(filter)),
                       const_cast<sock_filter*>(filter)};
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0)
        fail("cannot install its seccomp filter");
}

int status_code(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

void nothing(int) {}

// A signal to the run's group is the program's: this process waits on. Caught, not ignored: the
// program starts with every signal's default.
void wait_on_the_groups_signals() {
    struct sigaction wait_on {};
    wait_on.sa_handler = nothing;
    for (int signal : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(signal, &wait_on, nullptr);
}

// In the child of a waiter: asks for SIGKILL when the waiter dies, and ends here if it already
// has (its end of `alive` is closed: the kernel would send nothing).
void die_with_the_waiter(int alive) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail("cannot die with the parent");
    pollfd gone{alive, POLLIN, 0};
    if (::poll(&gone, 1, 0) == 1 && (gone.revents & (POLLHUP | POLLIN))) ::_exit(1);
}

// Waits for `child`: its exit code (128 + a signal that ended it).
int waited_for(pid_t child, const std::string& what) {
    int status = 0;
    while (::waitpid(child, &status, 0) < 0)
        if (errno != EINTR) fail("cannot wait for " + what);
    return status_code(status);
}

// Whether `program` is the egress bridge built beside this program (bridge.h): the same file as
// its sibling, by device and inode.
bool is_our_bridge(const char* program, const std::string& own_folder) {
    struct stat named {
    }, sibling{};
    return !own_folder.empty() && ::stat(program, &named) == 0 &&
           ::stat((own_folder + "/cocode-egress-bridge").c_str(), &sibling) == 0 &&
           named.st_dev == sibling.st_dev && named.st_ino == sibling.st_ino;
}

// The namespace's first process: the sandbox made, the program started, every process reaped
// until none is left; the program's exit code.
[[noreturn]] void first_process(Options& options, uid_t uid, gid_t gid, bool own_users,
                                int parent_alive, const std::string& cwd,
                                const std::string& own_folder) {
    if (options.die_with_parent) die_with_the_waiter(parent_alive);
    ::close(parent_alive);
    if (own_users) map_own_user(uid, gid);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        fail("cannot make its mounts private");
    // Every source taken from the host as it is, before anything is mounted over it; the
    // sandbox's own folders made.
    std::size_t own = 0;
    bool dev = false, covered = false;
    for (const Op& op : options.ops) {
        own += op.kind == Kind::tmpfs;
        dev = dev || op.kind == Kind::dev;
        covered = covered || (op.kind == Kind::proc && op.dest == kStage);
    }
    OwnFolders folders = make_own_folders(own, dev, covered);
    std::size_t next_folder = 0;
    for (Op& op : options.ops) {
        if ((op.kind == Kind::bind || op.kind == Kind::ro_bind) && op.source != "/") {
            struct stat there {};
            // As bubblewrap: a source that does not resolve (a dangling link too) is skipped.
            if (op.optional && ::stat(op.source.c_str(), &there) != 0 && errno == ENOENT) continue;
            op.tree = clone_tree(op.source);
            // What is bound keeps no setuid bit, and no device but /dev/null's cover of a file.
            std::uint64_t attrs = MOUNT_ATTR_NOSUID;
            if (op.kind == Kind::ro_bind) attrs |= MOUNT_ATTR_RDONLY;
            if (op.source != "/dev/null") attrs |= MOUNT_ATTR_NODEV;
            if (set_attributes(op.tree, "", AT_EMPTY_PATH | AT_RECURSIVE, attrs) != 0)
                fail("cannot make " + op.source + (op.kind == Kind::ro_bind ? " read-only" : ""));
        } else if (op.kind == Kind::tmpfs) {
            op.tree = folders.folders.at(next_folder++);
        } else if (op.kind == Kind::dev) {
            op.tree = std::exchange(folders.dev, -1);
        }
    }
    for (Op& op : options.ops) {
        switch (op.kind) {
            case Kind::ro_bind:
                if (op.source == "/") {
                    host_read_only();
                    break;
                }
                [[fallthrough]];
            case Kind::bind:
                if (op.tree >= 0) attach(op.tree, op.source, op.dest);  // else a missing -try
                break;
            case Kind::tmpfs:
                attach(op.tree, "a folder of its own", op.dest);
                break;
            case Kind::dev:
                if (op.tree < 0) usage("--dev is given once");
                attach(op.tree, "its /dev", op.dest);
                break;
            case Kind::proc:
                make_proc(op.dest);
                break;
            case Kind::remount_ro:
                if (set_attributes(AT_FDCWD, op.dest.c_str(), 0, MOUNT_ATTR_RDONLY) != 0)
                    fail("cannot make " + op.dest + " read-only");
                break;
        }
    }
    if (options.network && options.network_fd < 0) loopback_up();
    // Its folder entered again by name: the one it was started in may be under a mount now.
    if (::chdir(cwd.c_str()) != 0 && ::chdir("/") != 0) fail("cannot enter " + cwd);
    drop_privileges();
    refuse_what_reaches_out();
    // Not dumpable: what the sandbox runs cannot trace it or read its memory (the bridge's
    // connections); the program it starts is, as exec makes it.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) fail("cannot be made undumpable");

    // Its program the egress bridge built beside this one: the bridge runs here, in this
    // process, and its agent is the program (one process and one start fewer).
    std::vector<char*> argv = options.argv;
    std::optional<cocode::bridge::BridgeArgs> bridged;
    std::vector<cocode::bridge::Listener> listeners;
    if (is_our_bridge(argv[0], own_folder)) {
        auto parsed = cocode::bridge::parse_bridge(
            std::vector<std::string>(argv.begin() + 1, argv.end() - 1));
        if (!parsed) usage(parsed.error().message);
        auto listening = cocode::bridge::listen_all(*parsed);
        if (!listening) {
            std::fprintf(stderr, "cocode: egress bridge: %s\n", listening.error().message.c_str());
            std::fflush(stderr);
            ::_exit(3);
        }
        listeners = std::move(listening).value();
        bridged = std::move(parsed).value();
        argv.clear();
        for (auto& word : bridged->argv) argv.push_back(word.data());
        argv.push_back(nullptr);
    }
    // Started as posix_spawn starts it (no copy of this process's memory to fault in), every
    // signal back to its default.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t program = 0;
    if (const int error =
            ::posix_spawnp(&program, argv[0], nullptr, &attributes, argv.data(), environ);
        error != 0)
        fail("cannot start " + std::string(argv[0]), error);
    posix_spawnattr_destroy(&attributes);
    if (bridged) {
        // The agent's last requests still get out as it ends; a write to a connection gone
        // is an error of that connection, not an end of the bridge.
        ::signal(SIGPIPE, SIG_IGN);
        cocode::bridge::serve(std::move(listeners), bridged->socket);
    }
    // Every orphan reaped as it ends, until the program ends: then this process does, and
    // the kernel ends whatever the program left (setsid, double forks: they are all in the
    // namespace), as bubblewrap's sandbox ends with its program when it dies with its parent.
    for (;;) {
        int status = 0;
        const pid_t ended = ::wait(&status);
        if (ended == program) ::_exit(status_code(status));
        if (ended < 0 && errno != EINTR) ::_exit(1);
    }
}

// `--exec-with-parent PID -- PROGRAM [ARG]...`: PROGRAM started dying with PID, its parent,
// as the first process of a PID namespace of its own: when it ends, however it ends, the kernel
// ends everything it started. Bubblewrap needs both. Its first process inside asks for the
// parent-death signal only once the sandbox is built, so an outer process killed before that
// (with its dispatcher) left the sandbox running, its agent with nobody to end it; here the
// sandbox's namespace lies inside this one, and goes with it. This process waits, with
// PROGRAM's exit code as its own; a SIGTERM, SIGINT or SIGHUP to the run's group is the
// program's, as for the sandbox this program makes, and bubblewrap, the namespace's first
// process, takes none it has no handler for: the agent gets its grace.
[[noreturn]] void exec_with_parent(int argc, char** argv) {
    if (argc < 5 || std::strcmp(argv[3], "--") != 0)
        usage("--exec-with-parent PID -- PROGRAM [ARG]...");
    die_with(pid_named("--exec-with-parent", argv[2]));
    wait_on_the_groups_signals();
    // alive: the child knows the waiter is there; refused: the waiter learns that the child could
    // not become PROGRAM (a byte; its end of file is the exec).
    int alive[2], refused[2];
    if (::pipe2(alive, O_CLOEXEC) != 0 || ::pipe2(refused, O_CLOEXEC) != 0) fail("no pipe");
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    const bool own_users = uid != 0;
    const unsigned long flags = CLONE_NEWPID | SIGCHLD | (own_users ? CLONE_NEWUSER : 0);
    const long pid = ::syscall(SYS_clone, flags, nullptr, nullptr, nullptr, 0);
    if (pid == 0) {
        ::close(alive[1]);
        ::close(refused[0]);
        die_with_the_waiter(alive[0]);
        if (!own_users || own_user_mapped(uid, gid)) ::execv(argv[4], argv + 4);
        const char byte = 1;
        (void)!::write(refused[1], &byte, 1);
        ::_exit(1);
    }
    bool started = false;
    if (pid > 0) {
        ::close(alive[0]);
        ::close(refused[1]);
        char byte;
        ssize_t n;
        while ((n = ::read(refused[0], &byte, 1)) < 0 && errno == EINTR) {
        }
        started = n == 0;
    }
    if (!started) {
        // Refused to us but perhaps not to bubblewrap: Ubuntu's AppArmor grants user namespaces
        // to bubblewrap by name, and gives others one with no capability in it (the clone
        // succeeds, the mapping does not). Started as it was, with only its own late instant.
        if (pid > 0) waited_for(static_cast<pid_t>(pid), argv[4]);
        ::execv(argv[4], argv + 4);
        fail(std::string("cannot start ") + argv[4]);
    }
    ::_exit(waited_for(static_cast<pid_t>(pid), argv[4]));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
        std::printf("%s\n", COCODE_VERSION_TEXT);
        return 0;
    }
    if (argc == 3 && std::strcmp(argv[1], "--make-networks") == 0) return make_networks(argv[2]);
    if (argc > 1 && std::strcmp(argv[1], "--exec-with-parent") == 0) exec_with_parent(argc, argv);
    Options options = parse(argc, argv);
    std::string own_folder;  // where this program lies: its bridge lies beside it
    if (char* self = ::realpath("/proc/self/exe", nullptr)) {
        own_folder = self;
        own_folder.erase(own_folder.rfind('/'));
        std::free(self);
    }
    std::string cwd = "/";
    if (char* here = ::getcwd(nullptr, 0)) {
        cwd = here;
        std::free(here);
    }
    wait_on_the_groups_signals();
    int alive[2];
    if (::pipe2(alive, O_CLOEXEC) != 0) fail("no pipe");
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    const bool own_users = uid != 0;
    unsigned long flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | SIGCHLD;
    if (options.network_fd >= 0)
        join_network(options.network_fd, own_users);
    else if (options.network)
        flags |= CLONE_NEWNET;
    // Asked after the credentials changed (entering a user namespace forgets it).
    if (options.die_with_parent) die_with(options.parent);
    if (own_users) flags |= CLONE_NEWUSER;
    const long pid = ::syscall(SYS_clone, flags, nullptr, nullptr, nullptr, 0);
    if (pid < 0) fail("cannot make the namespaces (clone)");
    if (pid == 0) {
        ::close(alive[1]);
        first_process(options, uid, gid, own_users, alive[0], cwd, own_folder);
    }
    ::close(alive[0]);
    return waited_for(static_cast<pid_t>(pid), "the sandbox");
}
