#include "environment/view.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>

#include "core/files.h"

namespace cocode::environment {
namespace fs = std::filesystem;

namespace {

// `name` in the folder `at`, made from the file `from` (opened without following a link).
Result<void> copy_file(const fs::path& from, int at, const std::string& name, mode_t mode,
                       bool reflink) {
    UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!in.valid()) return Error::from_errno("cannot read " + from.string(), errno);
    UniqueFd out(::openat(at, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          mode | 0200));
    if (!out.valid()) {
        if (errno == EEXIST) return {};  // the tree's own stays
        return Error::from_errno("cannot create " + name, errno);
    }
    if (reflink && ::ioctl(out.get(), FICLONE, in.get()) == 0) return {};
    for (;;) {
        const ssize_t n = ::copy_file_range(in.get(), nullptr, out.get(), nullptr, 1 << 30, 0);
        if (n == 0) return {};
        if (n > 0) continue;
        if (errno == EINTR) continue;
        if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
            return Error::from_errno("cannot copy " + from.string(), errno);
        break;  // the plain way
    }
    std::string buffer(std::size_t{1} << 20, '\0');
    for (;;) {
        const ssize_t got = ::read(in.get(), buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return Error::from_errno("cannot read " + from.string(), errno);
        if (got == 0) return {};
        for (ssize_t done = 0; done < got;) {
            const ssize_t put =
                ::write(out.get(), buffer.data() + done, static_cast<std::size_t>(got - done));
            if (put < 0 && errno == EINTR) continue;
            if (put < 0) return Error::from_errno("cannot write " + name, errno);
            done += put;
        }
    }
}

// `from` copied as `name` into the folder `at`; false when something not a folder (a link)
// stood where a folder goes, and was left.
Result<bool> copy_into(const fs::path& from, int at, const std::string& name, bool reflink) {
    struct stat st {};
    if (::lstat(from.c_str(), &st) != 0)
        return Error::from_errno("cannot read " + from.string(), errno);
    if (S_ISLNK(st.st_mode)) {
        std::error_code ec;
        const fs::path target = fs::read_symlink(from, ec);
        if (ec) return Error::general("cannot read " + from.string() + ": " + ec.message());
        if (::symlinkat(target.c_str(), at, name.c_str()) != 0 && errno != EEXIST)
            return Error::from_errno("cannot create " + name, errno);
        return true;
    }
    if (S_ISREG(st.st_mode)) {
        if (auto ok = copy_file(from, at, name, st.st_mode & 07777, reflink); !ok)
            return std::move(ok).error();
        return true;
    }
    if (!S_ISDIR(st.st_mode)) return true;
    if (::mkdirat(at, name.c_str(), (st.st_mode & 07777) | 0700) != 0 && errno != EEXIST)
        return Error::from_errno("cannot create " + name, errno);
    UniqueFd folder(::openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!folder.valid()) {
        if (errno == ELOOP || errno == ENOTDIR) return false;  // a link or a file: left
        return Error::from_errno("cannot open " + name, errno);
    }
    bool whole = true;
    std::error_code ec;
    for (const auto& entry : list_folder(from, ec)) {
        auto copied = copy_into(entry.path, folder.get(), entry.path.filename().string(), reflink);
        if (!copied) return copied;
        whole = whole && *copied;
    }
    if (ec) return Error::general("cannot read " + from.string() + ": " + ec.message());
    return whole;
}

}  // namespace

Result<bool> copy_beneath(const fs::path& from, const fs::path& root, const fs::path& rel,
                          bool reflink) {
    auto parent = open_folder_beneath(root, rel.parent_path(), true);
    if (!parent) return std::move(parent).error();
    if (!*parent) return false;  // a link or a file on the way: left
    return copy_into(from, (*parent)->get(), rel.filename().string(), reflink);
}

namespace {

bool reflinks_between(const fs::path& store, const fs::path& tree_dir) {
    struct stat a {
    }, b{};
    if (::stat(store.c_str(), &a) != 0 || ::stat(tree_dir.c_str(), &b) != 0) return false;
    if (a.st_dev != b.st_dev) return false;
    static std::mutex mutex;
    static std::map<dev_t, bool> known;
    std::lock_guard<std::mutex> lock(mutex);
    if (auto found = known.find(a.st_dev); found != known.end()) return found->second;
    const fs::path probe = store / (".reflink-probe-" + std::to_string(::getpid()));
    bool works = false;
    {
        UniqueFd src(::open(probe.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        UniqueFd dst(::open((probe.string() + ".clone").c_str(),
                            O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        if (src.valid() && dst.valid() && ::write(src.get(), "probe", 5) == 5)
            works = ::ioctl(dst.get(), FICLONE, src.get()) == 0;
    }
    std::error_code ec;
    fs::remove(probe, ec);
    fs::remove(probe.string() + ".clone", ec);
    known[a.st_dev] = works;
    return works;
}

bool empty_folder(const fs::path& path) {
    std::error_code ec;
    return fs::is_directory(path, ec) && fs::is_empty(path, ec);
}

// A folder of ours for overlayfs: made when missing; never a link someone left there.
Result<void> own_folder(const fs::path& path) {
    std::error_code ec;
    fs::create_directories(path, ec);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return Error::general(path.string() + " is not a folder of cocode's");
    return {};
}

}  // namespace

std::string_view mode_name(Mode mode) {
    switch (mode) {
        case Mode::overlay:
            return "overlay";
        case Mode::reflink:
            return "reflink";
        case Mode::copy:
            break;
    }
    return "copy";
}

ModeChoice choose_mode(bool overlay_wanted, const fs::path& scratch, const fs::path& store,
                       const fs::path& tree_dir) {
    ModeChoice choice;
    if (overlay_wanted) {
        choice.why = overlay_refused(scratch);
        if (choice.why.empty()) {
            choice.mode = Mode::overlay;
            return choice;
        }
    } else {
        choice.why = "the agent runs without the sandbox, in the host's mount namespace";
    }
    if (reflinks_between(store, tree_dir)) {
        choice.mode = Mode::reflink;
        return choice;
    }
    choice.mode = Mode::copy;
    choice.why += "; no reflinks between " + store.string() + " and " + tree_dir.string() +
                  " (another file system, or one without them)";
    return choice;
}

Result<View> attach(const Entry& entry, const fs::path& tree, const fs::path& scratch, Mode mode) {
    View view;
    view.mode = mode;
    std::size_t index = 0;
    for (const auto& path : entry.manifest.paths) {
        const fs::path lower = entry.tree() / path, target = tree / path;
        std::error_code ec;
        const bool folder = fs::is_directory(fs::symlink_status(lower, ec));
        // The tree is a commit's (an agent's): nothing on the way to the path may be a link.
        auto opened = open_folder_beneath(tree, fs::path(path).parent_path(), true);
        if (!opened) return std::move(opened).error();
        if (!*opened) continue;  // a link on the way: this path of the environment is not there
        const int parent = (*opened)->get();
        const std::string name = target.filename().string();
        struct stat there {};
        const bool absent = ::fstatat(parent, name.c_str(), &there, AT_SYMLINK_NOFOLLOW) != 0;
        if (mode == Mode::overlay && folder &&
            (absent || (S_ISDIR(there.st_mode) && empty_folder(target)))) {
            const std::string n = std::to_string(index++);
            const fs::path upper = scratch / "upper" / n, work = scratch / "work" / n;
            for (const auto& own : {upper, work})
                if (auto ok = own_folder(own); !ok) return std::move(ok).error();
            if (::mkdirat(parent, name.c_str(), 0755) != 0 && errno != EEXIST)
                return Error::from_errno("cannot create " + target.string(), errno);
            view.overlays.push_back({lower, upper, work, target});
            continue;
        }
        if (auto ok = copy_into(lower, parent, name, mode != Mode::copy); !ok)
            return std::move(ok).error();
    }
    return view;
}

}  // namespace cocode::environment
