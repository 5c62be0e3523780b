// The index of one worktree behind the Codali docdex needs (docs/protocols.md): Xapian for
// full-text search (BM25), Universal Ctags for each file's definitions and imports. It lives in
// a folder of its own (the run folder's index/), holds the worktree as it stands — committed
// or not, untracked files included, ignored and binary files never — and is brought up to date
// from git's blob ids: a file is read and indexed again only when its blob changed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "index/ctags.h"

namespace cocode::index {

struct IndexOptions {
    std::uint64_t max_file_size = std::uint64_t{1} << 20;  // larger files: their name only
};

struct UpdateStats {
    std::size_t files = 0;    // in the worktree, as git sees it
    std::size_t indexed = 0;  // read and indexed by this update (new or changed blobs)
    std::size_t removed = 0;
    std::size_t skipped = 0;  // binary or too large, among those indexed
    double milliseconds = 0;
    std::string warning;  // "ctags_unavailable: …" when symbols could not be read
};

struct SearchHit {
    std::string path;
    long line = 0;        // 1-based: the definition searched for, or the best matching line
    std::string snippet;  // the lines around it
    int percent = 0;      // Xapian's relevance, 0-100
    std::string defines;  // the symbol it defines that the query named, if any
};

struct ImportEdge {
    std::string path;                   // the importing file (inbound) or the file (outbound)
    long line = 0;                      // of the import
    std::string spec;                   // as written
    std::optional<std::string> target;  // where it leads in the worktree (outbound)
};

struct Impact {
    std::vector<ImportEdge> inbound;   // who imports the file
    std::vector<ImportEdge> outbound;  // what it imports
};

class WorktreeIndex {
  public:
    // Opens (or creates) the index in `index_dir` for `worktree`. Nothing is read until update().
    static Result<std::unique_ptr<WorktreeIndex>> open(const std::filesystem::path& index_dir,
                                                       const std::filesystem::path& worktree,
                                                       IndexOptions options = {});
    ~WorktreeIndex();
    WorktreeIndex(const WorktreeIndex&) = delete;
    WorktreeIndex& operator=(const WorktreeIndex&) = delete;

    // Brings the index to the worktree as it stands.
    Result<UpdateStats> update();

    // Ranked files for `query` (Xapian's query syntax; words are stemmed; identifiers are
    // also found by their parts: `parse config` finds parse_config and parseConfig). A file
    // defining a symbol the query names ranks above files that only use it.
    Result<std::vector<SearchHit>> search(const std::string& query, std::size_t limit) const;
    // A file's definitions, in file order; an error for a file the index does not hold.
    Result<std::vector<Symbol>> symbols(const std::string& path) const;
    Result<Impact> impact(const std::string& path) const;

    // The worktree's files at the last update, sorted.
    const std::vector<std::string>& files() const;
    // The folders and files down to `max_depth` (1: the root's entries), deeper folders
    // summarised by their number of files; at most `max_lines` lines.
    std::string tree(int max_depth, std::size_t max_lines) const;

  private:
    struct Impl;
    explicit WorktreeIndex(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// The Xapian library's version, "1.4.22".
std::string xapian_version();

// Identifiers in `text` split into their parts, as extra words to index: "parseConfig
// parse_config HTTPServer" -> "parse Config parse config HTTP Server". Identifiers of one part
// add nothing.
std::string identifier_parts(std::string_view text);

}  // namespace cocode::index
