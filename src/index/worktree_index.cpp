#include "index/worktree_index.h"

#include <xapian.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/files.h"
#include "git/repository.h"

namespace cocode::index {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Document values and term prefixes (Xapian's convention: a capital letter, X for our own).
constexpr Xapian::valueno kPathSlot = 0;
constexpr Xapian::valueno kBlobSlot = 1;
constexpr char kIdPrefix[] = "Q";        // the path: one document per file
constexpr char kDefinesPrefix[] = "XD";  // a symbol the file defines, lowercased
constexpr char kImportPrefix[] = "XM";   // the key of something it imports (imports.h)
constexpr char kPathPrefix[] = "P";      // words of its path
// Xapian refuses terms over 245 bytes.
constexpr std::size_t kMaxTerm = 240;

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

Error index_error(const fs::path& dir, const Xapian::Error& e) {
    return Error::general("the index in " + dir.string() + ": " + e.get_description());
}

// A name as a query may spell it: lowercase, without underscores or spaces (parseConfig,
// parse_config and "parse config" are one name).
std::string squashed(std::string_view name) {
    std::string out;
    for (char c : name)
        if (c != '_' && c != ' ' && c != '-')
            out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    return out;
}

// A search's words, lowercased, with their identifier parts.
std::vector<std::string> query_words(const std::string& query) {
    std::vector<std::string> words;
    auto add = [&](std::string w) {
        if (!w.empty() && std::find(words.begin(), words.end(), w) == words.end())
            words.push_back(std::move(w));
    };
    std::string current;
    for (char c : query + " ") {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
            current += c;
            continue;
        }
        if (!current.empty()) {
            const std::string lowered = lower(current);
            if (lowered != "and" && lowered != "or" && lowered != "not") add(lowered);
            std::string parts = identifier_parts(current);
            std::size_t at = 0;
            while (at < parts.size()) {
                std::size_t sp = parts.find(' ', at);
                if (sp == std::string::npos) sp = parts.size();
                add(lower(parts.substr(at, sp - at)));
                at = sp + 1;
            }
            current.clear();
        }
    }
    return words;
}

json symbols_json(const std::vector<Symbol>& symbols) {
    json out = json::array();
    for (const auto& s : symbols)
        out.push_back({s.name, s.kind, s.line, s.end, s.scope, s.signature});
    return out;
}

std::vector<Symbol> symbols_from(const json& data) {
    std::vector<Symbol> out;
    for (const auto& s : data.value("s", json::array())) {
        if (!s.is_array() || s.size() != 6) continue;
        out.push_back({s[0].get<std::string>(), s[1].get<std::string>(), s[2].get<long>(),
                       s[3].get<long>(), s[4].get<std::string>(), s[5].get<std::string>()});
    }
    return out;
}

std::vector<ImportRef> imports_from(const json& data) {
    std::vector<ImportRef> out;
    for (const auto& i : data.value("i", json::array())) {
        if (!i.is_array() || i.size() != 3) continue;
        out.push_back({i[0].get<std::string>(), i[1].get<long>(), i[2].get<bool>()});
    }
    return out;
}

}  // namespace

std::string xapian_version() { return Xapian::version_string(); }

std::string identifier_parts(std::string_view text) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        if (!(std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < text.size() &&
               (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
            ++end;
        const std::string_view id = text.substr(i, end - i);
        i = end;
        std::vector<std::string_view> parts;
        std::size_t start = 0;
        auto cut = [&](std::size_t at) {
            if (at > start) parts.push_back(id.substr(start, at - start));
            start = at;
        };
        for (std::size_t k = 1; k < id.size(); ++k) {
            const char prev = id[k - 1], c = id[k];
            if (c == '_') {
                cut(k);
                start = k + 1;
                continue;
            }
            if (prev == '_') continue;
            const bool upper = std::isupper(static_cast<unsigned char>(c));
            if (upper && std::islower(static_cast<unsigned char>(prev)))
                cut(k);  // parseConfig
            else if (upper && std::isupper(static_cast<unsigned char>(prev)) && k + 1 < id.size() &&
                     std::islower(static_cast<unsigned char>(id[k + 1])))
                cut(k);  // HTTPServer
            else if (std::isdigit(static_cast<unsigned char>(c)) !=
                         std::isdigit(static_cast<unsigned char>(prev)) &&
                     !std::isupper(static_cast<unsigned char>(prev)))
                cut(k);  // utf8Length -> utf 8 Length
        }
        if (start < id.size() && id[start] != '_') parts.push_back(id.substr(start));
        if (parts.size() < 2) continue;
        for (auto part : parts) {
            if (part.empty() || part == "_") continue;
            out.append(part);
            out.push_back(' ');
        }
    }
    return out;
}

struct WorktreeIndex::Impl {
    fs::path dir;
    fs::path root;
    IndexOptions options;
    Xapian::WritableDatabase db;
    std::vector<std::string> files;
    std::unique_ptr<Resolver> resolver;

    std::optional<Xapian::Document> document(const std::string& path) const {
        const std::string id = kIdPrefix + path;
        auto it = db.postlist_begin(id);
        if (it == db.postlist_end(id)) return std::nullopt;
        return db.get_document(*it);
    }

    const Resolver& resolve() {
        if (!resolver)
            resolver = std::make_unique<Resolver>(
                files, [this](const std::string& path) -> std::optional<std::string> {
                    auto text = read_file(root / path, options.max_file_size);
                    if (!text) return std::nullopt;
                    return std::move(text).value();
                });
        return *resolver;
    }
};

WorktreeIndex::WorktreeIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WorktreeIndex::~WorktreeIndex() = default;

Result<std::unique_ptr<WorktreeIndex>> WorktreeIndex::open(const fs::path& index_dir,
                                                           const fs::path& worktree,
                                                           IndexOptions options) {
    auto impl = std::make_unique<Impl>();
    impl->dir = index_dir;
    impl->root = worktree;
    impl->options = options;
    std::error_code ec;
    fs::create_directories(index_dir, ec);
    if (ec) return Error::general("cannot make " + index_dir.string() + ": " + ec.message());
    try {
        impl->db =
            Xapian::WritableDatabase((index_dir / "xapian").string(), Xapian::DB_CREATE_OR_OPEN);
    } catch (const Xapian::Error& e) {
        return index_error(index_dir, e);
    }
    return std::unique_ptr<WorktreeIndex>(new WorktreeIndex(std::move(impl)));
}

Result<UpdateStats> WorktreeIndex::update() {
    Impl& m = *impl_;
    const auto started = std::chrono::steady_clock::now();
    auto repo = git::Repository::open(m.root);
    if (!repo) return std::move(repo).error();
    auto snapshot = repo->worktree_files();
    if (!snapshot) return std::move(snapshot).error();
    UpdateStats stats;
    stats.files = snapshot->size();
    try {
        // What the index holds: path -> blob.
        std::map<std::string, std::string> known;
        std::map<Xapian::docid, std::string> paths;
        for (auto it = m.db.valuestream_begin(kPathSlot); it != m.db.valuestream_end(kPathSlot);
             ++it)
            paths[it.get_docid()] = *it;
        for (auto it = m.db.valuestream_begin(kBlobSlot); it != m.db.valuestream_end(kBlobSlot);
             ++it)
            if (auto p = paths.find(it.get_docid()); p != paths.end()) known[p->second] = *it;

        std::vector<const git::SnapshotFile*> changed;
        std::set<std::string> present;
        for (const auto& file : *snapshot) {
            present.insert(file.path);
            auto k = known.find(file.path);
            if (k == known.end() || k->second != file.blob) changed.push_back(&file);
        }
        for (const auto& [path, blob] : known)
            if (!present.count(path)) {
                m.db.delete_document(kIdPrefix + path);
                ++stats.removed;
            }

        // Read what changed; binary and oversized files are recorded by name only.
        struct Pending {
            const git::SnapshotFile* file;
            std::string content;
            bool text = false;
        };
        std::vector<Pending> pending;
        std::vector<std::string> for_ctags;
        for (const auto* file : changed) {
            Pending p{file, {}, false};
            std::error_code ec;
            const auto size = fs::file_size(m.root / file->path, ec);
            if (!ec && size <= m.options.max_file_size) {
                auto text = read_file(m.root / file->path, m.options.max_file_size);
                if (text && text->find('\0', 0) == std::string::npos) {
                    p.content = std::move(text).value();
                    p.text = true;
                    for_ctags.push_back(file->path);
                }
            }
            if (!p.text) ++stats.skipped;
            pending.push_back(std::move(p));
        }
        Tags tags;
        if (!for_ctags.empty()) {
            auto ran = run_ctags(m.root, for_ctags);
            if (ran)
                tags = std::move(ran).value();
            else
                stats.warning = "ctags_unavailable: " + ran.error().message;
        }

        Xapian::TermGenerator generator;
        generator.set_stemmer(Xapian::Stem("english"));
        for (auto& p : pending) {
            const std::string& path = p.file->path;
            Xapian::Document doc;
            doc.add_boolean_term(kIdPrefix + path);
            doc.add_value(kPathSlot, path);
            doc.add_value(kBlobSlot, p.file->blob);
            generator.set_document(doc);
            std::string path_words = path;
            std::replace_if(
                path_words.begin(), path_words.end(),
                [](char c) { return c == '/' || c == '.' || c == '-'; }, ' ');
            generator.index_text_without_positions(path_words, 2);
            generator.index_text_without_positions(path_words, 1, kPathPrefix);
            json data = json::object();
            if (p.text) {
                const Language language = language_of(path);
                generator.index_text_without_positions(p.content);
                generator.index_text_without_positions(identifier_parts(p.content));
                const auto& symbols = tags.symbols[path];
                for (const auto& s : symbols) {
                    const std::string term = kDefinesPrefix + lower(s.name);
                    if (term.size() <= kMaxTerm) doc.add_term(term);
                    generator.index_text_without_positions(s.name, 3);
                }
                std::vector<ImportRef> imports = language == Language::javascript
                                                     ? scan_js_imports(p.content)
                                                     : tags.imports[path];
                json imported = json::array();
                for (const auto& i : imports) {
                    imported.push_back({i.spec, i.line, i.optional});
                    const std::string term = kImportPrefix + import_key(i.spec, language);
                    if (term.size() <= kMaxTerm) doc.add_boolean_term(term);
                }
                data["s"] = symbols_json(symbols);
                data["i"] = std::move(imported);
            } else {
                data["skipped"] = true;
            }
            doc.set_data(data.dump(-1, ' ', false, json::error_handler_t::replace));
            m.db.replace_document(kIdPrefix + path, doc);
            ++stats.indexed;
        }
        m.db.commit();
    } catch (const Xapian::Error& e) {
        return index_error(m.dir, e);
    }
    m.files.clear();
    for (const auto& file : *snapshot) m.files.push_back(file.path);
    m.resolver.reset();
    stats.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    return stats;
}

Result<std::vector<SearchHit>> WorktreeIndex::search(const std::string& query,
                                                     std::size_t limit) const {
    const Impl& m = *impl_;
    std::vector<SearchHit> hits;
    const auto words = query_words(query);
    if (words.empty()) return hits;
    try {
        Xapian::QueryParser parser;
        parser.set_database(m.db);
        parser.set_stemmer(Xapian::Stem("english"));
        parser.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
        parser.set_default_op(Xapian::Query::OP_OR);
        Xapian::Query parsed;
        try {
            parsed = parser.parse_query(query, Xapian::QueryParser::FLAG_DEFAULT);
        } catch (const Xapian::QueryParserError&) {
            parsed = parser.parse_query(query, 0);  // "a (b" and the like: plain words
        }
        // The parts of identifiers are indexed as words: query them too.
        std::vector<Xapian::Query> extra{parsed};
        for (const auto& w : words) {
            extra.emplace_back(w);
            // A file defining what the query names: rare, so weighty under BM25.
            if (std::string(kDefinesPrefix).size() + w.size() <= kMaxTerm)
                extra.emplace_back(Xapian::Query::OP_SCALE_WEIGHT,
                                   Xapian::Query(kDefinesPrefix + w), 2.0);
        }
        std::string joined;  // "parse config" also names parse_config
        for (const auto& w : words) joined += (joined.empty() ? "" : "_") + w;
        if (words.size() > 1)
            extra.emplace_back(Xapian::Query::OP_SCALE_WEIGHT,
                               Xapian::Query(kDefinesPrefix + joined), 2.0);
        // What a definition's name is compared with: the whole query, then each identifier.
        std::vector<std::string> named_whole{squashed(query)}, named_each;
        for (std::size_t at = 0; at < query.size();) {
            std::size_t end = at;
            while (end < query.size() &&
                   (std::isalnum(static_cast<unsigned char>(query[end])) || query[end] == '_'))
                ++end;
            if (end > at) named_each.push_back(squashed(query.substr(at, end - at)));
            at = end + 1;
        }
        Xapian::Enquire enquire(m.db);  // BM25 is Xapian's default weighting
        enquire.set_query(Xapian::Query(Xapian::Query::OP_OR, extra.begin(), extra.end()));
        const Xapian::MSet mset = enquire.get_mset(0, static_cast<Xapian::doccount>(limit));
        for (auto it = mset.begin(); it != mset.end(); ++it) {
            const Xapian::Document doc = it.get_document();
            SearchHit hit;
            hit.path = doc.get_value(kPathSlot);
            hit.percent = it.get_percent();
            const json data = json::parse(doc.get_data(), nullptr, false);
            // The line: a definition the query names (the whole query, else one of its
            // identifiers, compared without case or underscores), else the line with most
            // query words.
            const auto symbols = symbols_from(data.is_object() ? data : json::object());
            for (const auto* wanted : {&named_whole, &named_each}) {
                for (const auto& s : symbols) {
                    if (std::find(wanted->begin(), wanted->end(), squashed(s.name)) ==
                        wanted->end())
                        continue;
                    hit.line = s.line;
                    hit.defines = s.name;
                    break;
                }
                if (hit.line > 0) break;
            }
            auto text = read_file(m.root / hit.path, m.options.max_file_size);
            std::vector<std::string_view> lines;
            if (text) {
                std::string_view rest = *text;
                while (!rest.empty()) {
                    const std::size_t nl = rest.find('\n');
                    lines.push_back(rest.substr(0, nl));
                    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
                }
            }
            if (hit.line == 0) {
                std::size_t best = 0;
                for (std::size_t i = 0; i < lines.size(); ++i) {
                    const std::string l = lower(lines[i]);
                    std::size_t n = 0;
                    for (const auto& w : words) n += l.find(w) != std::string::npos;
                    if (n > best) best = n, hit.line = static_cast<long>(i + 1);
                }
            }
            if (hit.line > 0) {
                const std::size_t at = static_cast<std::size_t>(hit.line) - 1;
                for (std::size_t i = at > 0 ? at - 1 : 0; i < lines.size() && i <= at + 1; ++i) {
                    std::string_view l = lines[i];
                    if (l.size() > 200) l = l.substr(0, 200);
                    hit.snippet += std::string(l) + "\n";
                }
            }
            hits.push_back(std::move(hit));
        }
    } catch (const Xapian::Error& e) {
        return index_error(m.dir, e);
    }
    return hits;
}

Result<std::vector<Symbol>> WorktreeIndex::symbols(const std::string& path) const {
    try {
        auto doc = impl_->document(path);
        if (!doc) return Error::general("file_not_indexed: " + path);
        const json data = json::parse(doc->get_data(), nullptr, false);
        if (!data.is_object() || data.value("skipped", false))
            return Error::general("file_not_indexed: " + path + " (binary or too large)");
        return symbols_from(data);
    } catch (const Xapian::Error& e) {
        return index_error(impl_->dir, e);
    }
}

Result<Impact> WorktreeIndex::impact(const std::string& path) const {
    Impl& m = *impl_;
    Impact impact;
    try {
        auto doc = m.document(path);
        if (!doc) return Error::general("file_not_indexed: " + path);
        const Resolver& resolver = m.resolve();
        const json data = json::parse(doc->get_data(), nullptr, false);
        for (const auto& ref : imports_from(data.is_object() ? data : json::object())) {
            ImportEdge edge{path, ref.line, ref.spec, resolver.resolve(path, ref)};
            if (ref.optional && !edge.target) continue;
            impact.outbound.push_back(std::move(edge));
        }
        // Candidates by key, then each one's imports resolved: only real importers stay.
        std::vector<Xapian::Query> keys;
        for (const auto& key : keys_of(path)) keys.emplace_back(kImportPrefix + key);
        Xapian::Enquire enquire(m.db);
        enquire.set_query(Xapian::Query(Xapian::Query::OP_OR, keys.begin(), keys.end()));
        enquire.set_weighting_scheme(Xapian::BoolWeight());
        enquire.set_docid_order(Xapian::Enquire::ASCENDING);
        const std::string package = folder_of(path) + "/";
        const Xapian::MSet mset = enquire.get_mset(0, m.db.get_doccount());
        for (auto it = mset.begin(); it != mset.end(); ++it) {
            const Xapian::Document other = it.get_document();
            const std::string from = other.get_value(kPathSlot);
            if (from == path) continue;
            const json d = json::parse(other.get_data(), nullptr, false);
            for (const auto& ref : imports_from(d.is_object() ? d : json::object())) {
                auto target = resolver.resolve(from, ref);
                if (!target) continue;
                const bool go_package = language_of(path) == Language::go &&
                                        target->back() == '/' && *target == package &&
                                        folder_of(from) + "/" != package;
                if (*target != path && !go_package) continue;
                impact.inbound.push_back({from, ref.line, ref.spec, target});
                break;
            }
        }
        std::sort(impact.inbound.begin(), impact.inbound.end(),
                  [](const ImportEdge& a, const ImportEdge& b) { return a.path < b.path; });
    } catch (const Xapian::Error& e) {
        return index_error(m.dir, e);
    }
    return impact;
}

const std::vector<std::string>& WorktreeIndex::files() const { return impl_->files; }

std::string WorktreeIndex::tree(int max_depth, std::size_t max_lines) const {
    struct Folder {
        std::map<std::string, Folder> folders;
        std::vector<std::string> files;
        std::size_t total = 0;
    };
    Folder root;
    for (const auto& path : impl_->files) {
        Folder* at = &root;
        std::size_t start = 0;
        ++root.total;
        while (true) {
            const std::size_t slash = path.find('/', start);
            if (slash == std::string::npos) {
                at->files.push_back(path.substr(start));
                break;
            }
            at = &at->folders[path.substr(start, slash - start)];
            ++at->total;
            start = slash + 1;
        }
    }
    std::vector<std::string> lines;
    std::size_t cut = 0;
    auto emit = [&](std::string line) {
        if (lines.size() < max_lines)
            lines.push_back(std::move(line));
        else
            ++cut;
    };
    std::function<void(const Folder&, int)> walk = [&](const Folder& folder, int depth) {
        const std::string indent(static_cast<std::size_t>(depth - 1) * 2, ' ');
        for (const auto& [name, sub] : folder.folders) {
            emit(indent + name + "/ (" + std::to_string(sub.total) +
                 (sub.total == 1 ? " file)" : " files)"));
            if (depth < max_depth) walk(sub, depth + 1);
        }
        for (const auto& name : folder.files) emit(indent + name);
    };
    walk(root, 1);
    std::string out;
    for (const auto& line : lines) out += line + "\n";
    if (cut > 0) out += "… " + std::to_string(cut) + " more lines (ask with a smaller maxDepth)\n";
    return out;
}

}  // namespace cocode::index
