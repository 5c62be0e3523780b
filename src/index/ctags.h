// Universal Ctags run over a worktree's files: the definitions of each (docdex.symbols, and
// the terms that rank a defining file first in docdex.search) and the imports it tags (C/C++
// includes, Python imports, Go packages) for docdex.impact.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "index/imports.h"

namespace cocode::index {

struct Symbol {
    std::string name;
    std::string kind;  // "function", "class", "macro"… as ctags names it
    long line = 0;
    long end = 0;           // last line, when ctags knows it
    std::string scope;      // "Foo" for a member of class Foo
    std::string signature;  // "(const char * name)"
};

struct Tags {
    std::map<std::string, std::vector<Symbol>> symbols;     // by path
    std::map<std::string, std::vector<ImportRef>> imports;  // by path
};

// ctags on `files` (relative to `root`), in batches. A missing ctags is ExitCode::missing.
Result<Tags> run_ctags(const std::filesystem::path& root, const std::vector<std::string>& files);

// Reads ctags' JSON lines (--output-format=json --extras=+r) into `tags`.
void read_ctags_json(std::string_view output, Tags& tags);

// "Universal Ctags 5.9.0", or an error saying why there is none.
Result<std::string> ctags_version();

}  // namespace cocode::index
