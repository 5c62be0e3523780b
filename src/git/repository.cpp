#include "git/repository.h"

#include <git2.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "core/files.h"

namespace cocode::git {
namespace fs = std::filesystem;

namespace {

// git_libgit2_init once per process, shut down at exit.
struct Library {
    Library() { git_libgit2_init(); }
    ~Library() { git_libgit2_shutdown(); }
};
void ensure_library() { static Library library; }

template <class T, void (*FreeFn)(T*)>
struct Deleter {
    void operator()(T* p) const { FreeFn(p); }
};
template <class T, void (*FreeFn)(T*)>
using Handle = std::unique_ptr<T, Deleter<T, FreeFn>>;

using CommitHandle = Handle<git_commit, git_commit_free>;
using ObjectHandle = Handle<git_object, git_object_free>;
using ReferenceHandle = Handle<git_reference, git_reference_free>;
using RevwalkHandle = Handle<git_revwalk, git_revwalk_free>;
using ReferenceIteratorHandle = Handle<git_reference_iterator, git_reference_iterator_free>;
using WorktreeHandle = Handle<git_worktree, git_worktree_free>;
using RepoHandle = Handle<git_repository, git_repository_free>;
using StatusListHandle = Handle<git_status_list, git_status_list_free>;
using TreeHandle = Handle<git_tree, git_tree_free>;
using DiffHandle = Handle<git_diff, git_diff_free>;
using PatchHandle = Handle<git_patch, git_patch_free>;
using IndexHandle = Handle<git_index, git_index_free>;
using SignatureHandle = Handle<git_signature, git_signature_free>;

struct StrArray {
    git_strarray array{};
    ~StrArray() { git_strarray_dispose(&array); }
};

Error libgit2_error(std::string_view what) {
    const ::git_error* e = git_error_last();
    std::string message(what);
    message += ": ";
    message += e && e->message ? e->message : "unknown libgit2 error";
    return Error::general(std::move(message));
}

std::string oid_hex(const git_oid* oid) {
    char buf[GIT_OID_HEXSZ + 1];
    git_oid_tostr(buf, sizeof buf, oid);
    return buf;
}

CommitInfo describe(const git_commit* commit) {
    CommitInfo info;
    info.id = oid_hex(git_commit_id(commit));
    const char* raw = git_commit_message_raw(commit);
    info.message = raw ? raw : "";
    const char* summary = git_commit_summary(const_cast<git_commit*>(commit));
    info.summary = summary ? summary : "";
    return info;
}

Result<CommitHandle> peel_commit(git_repository* repo, const std::string& revision) {
    git_object* obj = nullptr;
    if (git_revparse_single(&obj, repo, revision.c_str()) != 0)
        return libgit2_error("cannot resolve " + revision);
    ObjectHandle object(obj);
    git_object* peeled = nullptr;
    if (git_object_peel(&peeled, object.get(), GIT_OBJECT_COMMIT) != 0)
        return libgit2_error(revision + " is not a commit");
    return CommitHandle(reinterpret_cast<git_commit*>(peeled));
}

fs::path strip_slash(const char* p) {
    if (!p) return {};
    std::string s(p);
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
}

}  // namespace

void Repository::Free::operator()(git_repository* repo) const { git_repository_free(repo); }

std::string libgit2_version() {
    int major = 0, minor = 0, rev = 0;
    git_libgit2_version(&major, &minor, &rev);
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(rev);
}

namespace {

// Files that differ from HEAD in `repo`'s work tree, untracked ones included (ignored ones
// and submodules not): what `git status --porcelain` would list. nullopt when it cannot tell.
std::optional<std::size_t> count_changes(git_repository* repo) {
    git_status_options so;
    git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
    so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
    git_status_list* sl = nullptr;
    if (git_status_list_new(&sl, repo, &so) != 0) return std::nullopt;
    StatusListHandle status(sl);
    return git_status_list_entrycount(status.get());
}

}  // namespace

Result<Repository> Repository::open(const fs::path& dir) {
    ensure_library();
    git_repository* repo = nullptr;
    // Discovery stops where git's would: GIT_CEILING_DIRECTORIES is honoured as git honours it.
    const char* ceiling = std::getenv("GIT_CEILING_DIRECTORIES");
    if (int rc = git_repository_open_ext(&repo, dir.c_str(), 0, ceiling); rc != 0) {
        if (rc == GIT_ENOTFOUND)
            return Error::general("not a git repository (nor any of its parents): " +
                                  fs::weakly_canonical(fs::absolute(dir)).string());
        return libgit2_error("cannot open the git repository at " + dir.string());
    }
    return Repository(repo);
}

Result<std::vector<std::string>> Repository::uncommitted_paths() const {
    git_status_options so;
    git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
    so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
    git_status_list* sl = nullptr;
    if (git_status_list_new(&sl, repo_.get(), &so) != 0)
        return libgit2_error("cannot read the status of " + work_dir().string());
    StatusListHandle status(sl);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < git_status_list_entrycount(status.get()); ++i) {
        const git_status_entry* entry = git_status_byindex(status.get(), i);
        const git_diff_delta* delta =
            entry->index_to_workdir ? entry->index_to_workdir : entry->head_to_index;
        if (delta && delta->new_file.path) out.emplace_back(delta->new_file.path);
    }
    return out;
}

Result<std::string> Repository::worktree_tree() const {
    // The repository's own index, changed in memory only and read again from disk before
    // returning: its stat cache spares rereading unchanged files, and the file on disk, which
    // an agent's git uses, is never written.
    git_index* raw_index = nullptr;
    if (git_repository_index(&raw_index, repo_.get()) != 0)
        return libgit2_error("cannot read the index of " + work_dir().string());
    IndexHandle index(raw_index);
    struct Restore {
        git_index* index;
        ~Restore() { git_index_read(index, 1); }
    } restore{index.get()};
    char star[] = "*";
    char* patterns[] = {star};
    git_strarray all{patterns, 1};
    if (git_index_add_all(index.get(), &all, GIT_INDEX_ADD_DEFAULT, nullptr, nullptr) != 0)
        return libgit2_error("cannot read the files of " + work_dir().string());
    if (git_index_update_all(index.get(), &all, nullptr, nullptr) != 0)
        return libgit2_error("cannot read the files of " + work_dir().string());
    git_oid tree;
    if (git_index_write_tree(&tree, index.get()) != 0)
        return libgit2_error("cannot write the tree of " + work_dir().string());
    return oid_hex(&tree);
}

Result<std::vector<SnapshotFile>> Repository::worktree_files() const {
    git_index* raw_index = nullptr;
    if (git_repository_index(&raw_index, repo_.get()) != 0)
        return libgit2_error("cannot read the index of " + work_dir().string());
    IndexHandle index(raw_index);
    std::map<std::string, std::string> files;
    const std::size_t count = git_index_entrycount(index.get());
    for (std::size_t i = 0; i < count; ++i) {
        const git_index_entry* entry = git_index_get_byindex(index.get(), i);
        if (!entry || git_index_entry_stage(entry) != 0) continue;
        if ((entry->mode & 0170000) != 0100000) continue;  // links, submodules
        files.emplace_hint(files.end(), entry->path, oid_hex(&entry->id));
    }
    // What differs from the index in the worktree, untracked files included (ignored ones not).
    git_status_options so;
    git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
    so.show = GIT_STATUS_SHOW_WORKDIR_ONLY;
    so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
               GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
    git_status_list* sl = nullptr;
    if (git_status_list_new(&sl, repo_.get(), &so) != 0)
        return libgit2_error("cannot read the status of " + work_dir().string());
    StatusListHandle status(sl);
    const fs::path root = work_dir();
    for (std::size_t i = 0; i < git_status_list_entrycount(status.get()); ++i) {
        const git_status_entry* entry = git_status_byindex(status.get(), i);
        const git_diff_delta* delta = entry->index_to_workdir;
        if (!delta || !delta->new_file.path) continue;
        const std::string path = delta->new_file.path;
        if (entry->status & GIT_STATUS_WT_DELETED) {
            files.erase(path);
            continue;
        }
        struct stat st {};
        if (::lstat((root / path).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
            files.erase(path);  // gone meanwhile, or a link
            continue;
        }
        git_oid blob;
        if (git_odb_hashfile(&blob, (root / path).c_str(), GIT_OBJECT_BLOB) != 0) {
            files.erase(path);  // unreadable now: not part of what can be judged or indexed
            continue;
        }
        files[path] = oid_hex(&blob);
    }
    std::vector<SnapshotFile> out;
    out.reserve(files.size());
    for (auto& [path, blob] : files) out.push_back({path, std::move(blob)});
    return out;
}

Result<std::string> Repository::commit_unreferenced(const std::string& tree,
                                                    const std::string& parent,
                                                    const std::string& message) const {
    git_oid tree_id;
    if (git_oid_fromstr(&tree_id, tree.c_str()) != 0) return libgit2_error("bad tree id " + tree);
    git_tree* raw_tree = nullptr;
    if (git_tree_lookup(&raw_tree, repo_.get(), &tree_id) != 0)
        return libgit2_error("cannot find tree " + tree);
    TreeHandle tree_handle(raw_tree);
    auto parent_commit = peel_commit(repo_.get(), parent);
    if (!parent_commit) return std::move(parent_commit).error();
    git_signature* raw_signature = nullptr;
    if (git_signature_now(&raw_signature, "cocode", "cocode@cocode.invalid") != 0)
        return libgit2_error("cannot make a signature");
    SignatureHandle signature(raw_signature);
    const git_commit* parents[] = {parent_commit->get()};
    git_oid id;
    if (git_commit_create(&id, repo_.get(), nullptr, signature.get(), signature.get(), nullptr,
                          message.c_str(), tree_handle.get(), 1, parents) != 0)
        return libgit2_error("cannot write a commit");
    return oid_hex(&id);
}

bool Repository::has_commits() const {
    git_reference* head = nullptr;
    if (git_repository_head(&head, repo_.get()) != 0) return false;
    git_reference_free(head);
    return true;
}

fs::path Repository::git_dir() const { return strip_slash(git_repository_path(repo_.get())); }
fs::path Repository::common_dir() const {
    return strip_slash(git_repository_commondir(repo_.get()));
}
fs::path Repository::work_dir() const { return strip_slash(git_repository_workdir(repo_.get())); }
bool Repository::is_linked_worktree() const { return git_repository_is_worktree(repo_.get()) == 1; }

fs::path Repository::main_work_dir() const {
    return is_linked_worktree() ? common_dir().parent_path() : work_dir();
}

Result<CommitInfo> Repository::head() const { return lookup("HEAD"); }

std::optional<std::string> Repository::head_branch() const {
    git_reference* r = nullptr;
    if (git_repository_head_detached(repo_.get()) == 1) return std::nullopt;
    if (git_reference_lookup(&r, repo_.get(), "HEAD") != 0) return std::nullopt;
    ReferenceHandle head(r);
    const char* target = git_reference_symbolic_target(head.get());
    constexpr std::string_view kHeads = "refs/heads/";
    if (!target || std::string_view(target).substr(0, kHeads.size()) != kHeads) return std::nullopt;
    return std::string(target + kHeads.size());
}

bool Repository::branch_exists(const std::string& branch) const {
    git_reference* r = nullptr;
    if (git_branch_lookup(&r, repo_.get(), branch.c_str(), GIT_BRANCH_LOCAL) != 0) return false;
    git_reference_free(r);
    return true;
}

Result<void> Repository::delete_branch(const std::string& branch) {
    git_reference* r = nullptr;
    if (git_branch_lookup(&r, repo_.get(), branch.c_str(), GIT_BRANCH_LOCAL) != 0)
        return libgit2_error("no branch " + branch);
    ReferenceHandle ref(r);
    if (git_branch_delete(ref.get()) != 0) return libgit2_error("cannot delete branch " + branch);
    return {};
}

Result<CommitInfo> Repository::lookup(const std::string& revision) const {
    auto commit = peel_commit(repo_.get(), revision);
    if (!commit) return std::move(commit).error();
    return describe(commit->get());
}

Result<bool> Repository::is_ancestor(const std::string& ancestor,
                                     const std::string& descendant) const {
    auto a = peel_commit(repo_.get(), ancestor);
    if (!a) return std::move(a).error();
    auto d = peel_commit(repo_.get(), descendant);
    if (!d) return std::move(d).error();
    if (git_oid_equal(git_commit_id(a->get()), git_commit_id(d->get()))) return true;
    int rc = git_graph_descendant_of(repo_.get(), git_commit_id(d->get()), git_commit_id(a->get()));
    if (rc < 0) return libgit2_error("cannot tell whether " + descendant + " contains " + ancestor);
    return rc == 1;
}

Result<std::optional<std::string>> Repository::file_at(const std::string& revision,
                                                       const std::string& path) const {
    auto commit = peel_commit(repo_.get(), revision);
    if (!commit) return std::move(commit).error();
    git_tree* t = nullptr;
    if (git_commit_tree(&t, commit->get()) != 0)
        return libgit2_error("cannot read the tree of " + revision);
    TreeHandle tree(t);
    git_tree_entry* e = nullptr;
    if (git_tree_entry_bypath(&e, tree.get(), path.c_str()) != 0)
        return std::optional<std::string>{};
    Handle<git_tree_entry, git_tree_entry_free> entry(e);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) return std::optional<std::string>{};
    git_blob* b = nullptr;
    if (git_blob_lookup(&b, repo_.get(), git_tree_entry_id(entry.get())) != 0)
        return libgit2_error("cannot read " + path + " at " + revision);
    Handle<git_blob, git_blob_free> blob(b);
    const auto* data = static_cast<const char*>(git_blob_rawcontent(blob.get()));
    return std::optional<std::string>{
        std::string(data, static_cast<std::size_t>(git_blob_rawsize(blob.get())))};
}

Result<std::vector<CommitInfo>> Repository::commits_between(const std::string& base,
                                                            const std::string& head) const {
    return commits_between(std::vector<std::string>{base}, head);
}

Result<std::vector<CommitInfo>> Repository::commits_between(const std::vector<std::string>& hidden,
                                                            const std::string& head) const {
    auto head_commit = peel_commit(repo_.get(), head);
    if (!head_commit) return std::move(head_commit).error();

    git_revwalk* w = nullptr;
    if (git_revwalk_new(&w, repo_.get()) != 0) return libgit2_error("cannot walk commits");
    RevwalkHandle walk(w);
    git_revwalk_sorting(walk.get(), GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
    if (git_revwalk_push(walk.get(), git_commit_id(head_commit->get())) != 0)
        return libgit2_error("cannot walk from " + head);
    for (const auto& base : hidden) {
        auto base_commit = peel_commit(repo_.get(), base);
        if (!base_commit) return std::move(base_commit).error();
        if (git_revwalk_hide(walk.get(), git_commit_id(base_commit->get())) != 0)
            return libgit2_error("cannot walk " + base + ".." + head);
    }

    std::vector<CommitInfo> commits;
    git_oid oid;
    int rc = 0;
    while ((rc = git_revwalk_next(&oid, walk.get())) == 0) {
        git_commit* c = nullptr;
        if (git_commit_lookup(&c, repo_.get(), &oid) != 0)
            return libgit2_error("cannot read commit");
        CommitHandle commit(c);
        commits.push_back(describe(commit.get()));
    }
    if (rc != GIT_ITEROVER) return libgit2_error("walking to " + head);
    return commits;
}

Result<std::size_t> Repository::unpushed_commits(const std::string& branch,
                                                 const std::string& base) const {
    auto head = peel_commit(repo_.get(), "refs/heads/" + branch);
    if (!head) return std::move(head).error();
    git_revwalk* w = nullptr;
    if (git_revwalk_new(&w, repo_.get()) != 0) return libgit2_error("cannot walk commits");
    RevwalkHandle walk(w);
    if (git_revwalk_push(walk.get(), git_commit_id(head->get())) != 0)
        return libgit2_error("cannot walk " + branch);
    if (!base.empty()) {
        auto base_commit = peel_commit(repo_.get(), base);
        if (!base_commit) return std::move(base_commit).error();
        if (git_revwalk_hide(walk.get(), git_commit_id(base_commit->get())) != 0)
            return libgit2_error("cannot walk " + base + ".." + branch);
    }
    // No remote-tracking ref at all is fine (nothing is hidden); a failure to read them is not.
    int rc = git_revwalk_hide_glob(walk.get(), "refs/remotes/*");
    if (rc != 0 && rc != GIT_ENOTFOUND) return libgit2_error("cannot read the remote refs");
    // Commits another local branch holds (the work merged into main, say) are not lost either.
    git_reference_iterator* it = nullptr;
    if (git_reference_iterator_glob_new(&it, repo_.get(), "refs/heads/*") != 0)
        return libgit2_error("cannot read the branches");
    ReferenceIteratorHandle others(it);
    const char* name = nullptr;
    while ((rc = git_reference_next_name(&name, others.get())) == 0) {
        if (name == "refs/heads/" + branch) continue;
        git_oid other;
        if (git_reference_name_to_id(&other, repo_.get(), name) != 0)
            return libgit2_error(std::string("cannot read ") + name);
        if (git_revwalk_hide(walk.get(), &other) != 0)
            return libgit2_error(std::string("cannot walk past ") + name);
    }
    if (rc != GIT_ITEROVER) return libgit2_error("cannot read the branches");
    std::size_t count = 0;
    git_oid oid;
    while ((rc = git_revwalk_next(&oid, walk.get())) == 0) ++count;
    if (rc != GIT_ITEROVER) return libgit2_error("walking " + branch);
    return count;
}

Result<std::vector<FileChange>> Repository::changed_files(const std::string& base,
                                                          const std::string& head) const {
    git_tree* trees[2] = {nullptr, nullptr};
    for (int i = 0; i < 2; ++i) {
        auto commit = peel_commit(repo_.get(), i == 0 ? base : head);
        if (!commit) return std::move(commit).error();
        if (git_commit_tree(&trees[i], commit->get()) != 0)
            return libgit2_error("cannot read the tree of " + (i == 0 ? base : head));
    }
    TreeHandle old_tree(trees[0]), new_tree(trees[1]);
    git_diff* d = nullptr;
    if (git_diff_tree_to_tree(&d, repo_.get(), old_tree.get(), new_tree.get(), nullptr) != 0)
        return libgit2_error("cannot diff " + base + ".." + head);
    DiffHandle diff(d);
    git_diff_find_options find;
    git_diff_find_options_init(&find, GIT_DIFF_FIND_OPTIONS_VERSION);
    find.flags = GIT_DIFF_FIND_RENAMES;
    if (git_diff_find_similar(diff.get(), &find) != 0)
        return libgit2_error("cannot find renames in " + base + ".." + head);

    std::vector<FileChange> changes;
    const std::size_t count = git_diff_num_deltas(diff.get());
    for (std::size_t i = 0; i < count; ++i) {
        const git_diff_delta* delta = git_diff_get_delta(diff.get(), i);
        FileChange change;
        change.path = delta->new_file.path ? delta->new_file.path : "";
        change.old_path = delta->old_file.path ? delta->old_file.path : change.path;
        switch (delta->status) {
            case GIT_DELTA_ADDED:
                change.status = 'A';
                break;
            case GIT_DELTA_DELETED:
                change.status = 'D';
                change.path = change.old_path;
                break;
            case GIT_DELTA_RENAMED:
                change.status = 'R';
                break;
            case GIT_DELTA_TYPECHANGE:
                change.status = 'T';
                break;
            default:
                change.status = 'M';
                break;
        }
        git_patch* p = nullptr;
        if (git_patch_from_diff(&p, diff.get(), i) != 0)
            return libgit2_error("cannot read the change to " + change.path);
        PatchHandle patch(p);
        // Binary or not is known once the content is loaded, which making the patch does.
        if (patch)
            change.binary = (git_patch_get_delta(patch.get())->flags & GIT_DIFF_FLAG_BINARY) != 0;
        if (patch && !change.binary) {
            std::size_t context = 0, added = 0, removed = 0;
            git_patch_line_stats(&context, &added, &removed, patch.get());
            change.insertions = static_cast<int>(added);
            change.deletions = static_cast<int>(removed);
        }
        changes.push_back(std::move(change));
    }
    std::sort(changes.begin(), changes.end(),
              [](const FileChange& a, const FileChange& b) { return a.path < b.path; });
    return changes;
}

Result<WorktreeInfo> Repository::add_worktree(const std::string& name, const fs::path& path,
                                              const std::string& branch, const std::string& from) {
    auto commit = peel_commit(repo_.get(), from);
    if (!commit) return std::move(commit).error();
    git_reference* r = nullptr;
    if (git_branch_create(&r, repo_.get(), branch.c_str(), commit->get(), 0) != 0)
        return libgit2_error("cannot create branch " + branch);
    ReferenceHandle ref(r);
    auto made = check_out_worktree(name, path, ref.get());
    if (!made) git_branch_delete(ref.get());  // leave nothing half-made behind
    return made;
}

Result<WorktreeInfo> Repository::add_worktree_on(const std::string& name, const fs::path& path,
                                                 const std::string& branch) {
    git_reference* r = nullptr;
    if (git_branch_lookup(&r, repo_.get(), branch.c_str(), GIT_BRANCH_LOCAL) != 0)
        return libgit2_error("no branch " + branch);
    ReferenceHandle ref(r);
    return check_out_worktree(name, path, ref.get());
}

Result<WorktreeInfo> Repository::check_out_worktree(const std::string& name, const fs::path& path,
                                                    git_reference* branch) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);  // libgit2 makes only the last folder
    if (ec)
        return Error::general("cannot create " + path.parent_path().string() + ": " + ec.message());
    // The *_init functions rather than the INIT macros, whose partial initialisers clang flags.
    git_worktree_add_options options;
    git_worktree_add_options_init(&options, GIT_WORKTREE_ADD_OPTIONS_VERSION);
    options.ref = branch;
    git_worktree* wt = nullptr;
    if (git_worktree_add(&wt, repo_.get(), name.c_str(), path.c_str(), &options) != 0)
        return libgit2_error("cannot add worktree " + name + " at " + path.string());
    WorktreeHandle worktree(wt);
    return WorktreeInfo{name, strip_slash(git_worktree_path(worktree.get())), true, false};
}

Result<std::vector<WorktreeInfo>> Repository::worktrees() const {
    StrArray names;
    if (git_worktree_list(&names.array, repo_.get()) != 0)
        return libgit2_error("cannot list worktrees");
    std::vector<WorktreeInfo> out;
    for (std::size_t i = 0; i < names.array.count; ++i) {
        git_worktree* wt = nullptr;
        if (git_worktree_lookup(&wt, repo_.get(), names.array.strings[i]) != 0) continue;
        WorktreeHandle worktree(wt);
        WorktreeInfo info;
        info.name = names.array.strings[i];
        info.path = strip_slash(git_worktree_path(worktree.get()));
        info.valid = git_worktree_validate(worktree.get()) == 0;
        info.locked = git_worktree_is_locked(nullptr, worktree.get()) > 0;
        out.push_back(std::move(info));
    }
    return out;
}

Result<void> Repository::remove_worktree(const std::string& name, bool force,
                                         const fs::path& expected) {
    git_worktree* wt = nullptr;
    if (git_worktree_lookup(&wt, repo_.get(), name.c_str()) != 0)
        return libgit2_error("no worktree named " + name);
    WorktreeHandle worktree(wt);
    fs::path path = strip_slash(git_worktree_path(worktree.get()));
    // Where its entry says it is (`gitdir`) is the worktree's own to rewrite: what is removed
    // is the folder cocode made and the entry, never a folder the entry names.
    const bool where_made = fs::weakly_canonical(path) == fs::weakly_canonical(expected);
    if (!force) {
        if (!where_made)
            return Error::general("worktree " + name + ": its entry names " + path.string() +
                                  ", not " + expected.string());
        if (git_worktree_is_locked(nullptr, worktree.get()) > 0)
            return Error::general("worktree " + name + " is locked");
        if (git_worktree_validate(worktree.get()) == 0) {
            git_repository* r = nullptr;
            if (git_repository_open_from_worktree(&r, worktree.get()) != 0)
                return libgit2_error("cannot open worktree " + name);
            RepoHandle wt_repo(r);
            auto changed = count_changes(wt_repo.get());
            if (!changed) return libgit2_error("cannot read the status of worktree " + name);
            if (*changed > 0)
                return Error::general("worktree " + name + " has uncommitted changes (" +
                                      path.string() + ")");
        }
    }
    if (auto removed = remove_tree(expected); !removed) return removed;
    return remove_tree(common_dir() / "worktrees" / name);
}

Result<std::vector<std::string>> Repository::prune_worktrees() {
    auto list = worktrees();
    if (!list) return std::move(list).error();
    std::vector<std::string> pruned;
    for (const WorktreeInfo& info : *list) {
        if (info.valid || info.locked) continue;
        git_worktree* wt = nullptr;
        if (git_worktree_lookup(&wt, repo_.get(), info.name.c_str()) != 0) continue;
        WorktreeHandle worktree(wt);
        git_worktree_prune_options po;
        git_worktree_prune_options_init(&po, GIT_WORKTREE_PRUNE_OPTIONS_VERSION);
        if (git_worktree_is_prunable(worktree.get(), &po) <= 0) continue;
        if (git_worktree_prune(worktree.get(), &po) != 0)
            return libgit2_error("cannot prune " + info.name);
        pruned.push_back(info.name);
    }
    return pruned;
}

Result<std::string> Repository::remote_url(const std::string& name) const {
    git_remote* raw = nullptr;
    if (git_remote_lookup(&raw, repo_.get(), name.c_str()) != 0)
        return Error::general("no remote named " + name);
    Handle<git_remote, git_remote_free> remote(raw);
    const char* url = git_remote_url(remote.get());
    if (url == nullptr || *url == '\0') return Error::general("remote " + name + " has no URL");
    return std::string(url);
}

std::optional<std::string> Repository::config_string(const std::string& name) const {
    git_config* raw = nullptr;
    if (git_repository_config_snapshot(&raw, repo_.get()) != 0) return std::nullopt;
    Handle<git_config, git_config_free> config(raw);
    const char* value = nullptr;
    if (git_config_get_string(&value, config.get(), name.c_str()) != 0 || value == nullptr)
        return std::nullopt;
    return std::string(value);
}

Result<void> Repository::exclude(const std::string& pattern) const {
    const fs::path file = common_dir() / "info" / "exclude";
    // Held under a lock of cocode's own name: git treats `*.lock` in its folders as its own
    // (held by a git process), and people delete them.
    const fs::path lock = common_dir() / "cocode" / "exclude.held";
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    fs::create_directories(lock.parent_path(), ec);
    return update_file_locked(
        file,
        [&](const std::optional<std::string>& current) -> Result<std::string> {
            std::string text = current.value_or("");
            std::istringstream lines(text);
            for (std::string line; std::getline(lines, line);) {
                if (line == pattern) return text;
            }
            if (!text.empty() && text.back() != '\n') text += '\n';
            return text + pattern + "\n";
        },
        0644, Durability::full, lock);
}

}  // namespace cocode::git
