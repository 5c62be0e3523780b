// Issue text is written by anyone who can open an issue, and an agent reads all of it: what a
// person reviewing the issue cannot see must not reach the agent either. visible_text keeps
// what GitHub renders and drops what it hides:
//   - HTML comments (<!-- … -->; an unclosed one hides the rest, as GitHub renders it), outside
//     code spans and fenced code blocks, where they are shown as text;
//   - link reference definitions nothing refers to (`[//]: # (hidden)`, the Markdown comment);
//   - invisible and direction-changing characters: zero-width spaces and joiners, word joiner,
//     BOM, soft hyphen, Mongolian vowel separator, the bidi embeddings, overrides, isolates and
//     marks, Unicode tag characters (U+E0000–E007F, which smuggle ASCII) and the supplementary
//     variation selectors (U+E0100–E01EF).
// Malformed UTF-8 passes through as it is (the terminal layer escapes it where it is shown).
#pragma once

#include <string>
#include <string_view>

namespace cocode {

struct VisibleText {
    std::string text;
    std::size_t comments = 0;    // HTML comments and unreferenced definitions removed
    std::size_t characters = 0;  // invisible or bidi code points removed
    bool changed() const { return comments + characters > 0; }
};

VisibleText visible_text(std::string_view markdown);

// True for a code point visible_text removes.
bool is_hidden_code_point(char32_t c);

}  // namespace cocode
