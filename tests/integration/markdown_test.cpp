// The one Markdown escaper (core/markdown.h), rendered by GitHub's own renderer (cmark-gfm,
// with the extensions GitHub turns on for comments): hostile names — markup, HTML, a hidden
// comment, mentions, `|`, backticks, a workflow command, control characters — come out as the
// text they were, never as markup; and a report and a summary that carry them keep their shape.
#include "core/markdown.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "check/report.h"
#include "test_support.h"

namespace cocode {
namespace {

using test::Shell;

// What GitHub would show of `markdown`, as HTML. Raw HTML is let through (--unsafe), as GitHub
// lets through what its sanitizer allows: HTML that was not escaped shows as tags here.
std::string rendered(const std::string& markdown) {
    test::TempDir dir;
    Shell out = test::sh("cmark-gfm --unsafe -e table -e autolink -e strikethrough -e tagfilter",
                         dir.path(), markdown);
    EXPECT_EQ(out.exit_code, 0) << out.err;
    return out.out;
}

// The tags in `html` (their names), and its text with the entities read back.
std::multiset<std::string> tags_of(const std::string& html) {
    std::multiset<std::string> tags;
    static const std::regex tag("<(/?[a-zA-Z0-9]+)[^>]*>");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), tag);
         it != std::sregex_iterator(); ++it)
        tags.insert((*it)[1]);
    return tags;
}
std::string text_of(std::string html) {
    html = std::regex_replace(html, std::regex("<[^>]*>"), "");
    for (const auto& [entity, c] : std::vector<std::pair<std::string, std::string>>{
             {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}}) {
        for (auto at = html.find(entity); at != std::string::npos; at = html.find(entity, at + 1))
            html.replace(at, entity.size(), c);
    }
    const auto first = html.find_first_not_of('\n');
    const auto last = html.find_last_not_of('\n');
    return first == std::string::npos ? std::string() : html.substr(first, last - first + 1);
}

// A name as hostile as a name can be.
const std::string kHostile =
    "**bold** _em_ ~~gone~~ [a link](example.invalid) ![img](x.png) "
    "<img src=x onerror=alert(1)> <!-- hidden --> @everyone #1 :+1: `code` ``two`` | col | "
    "\\*not\\* &amp; $x^2$ __init__.py \x1b[31mred\x07 ::error::forged\n# heading\n- item\n> "
    "quote\n1. first";

// What a reader must see of it: the same characters, line ends as spaces, a control character
// as U+FFFD.
std::string shown(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\n' || c == '\r' || c == '\t')
            out += ' ';
        else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            out += "\ufffd";
        else
            out += c;
    }
    return out;
}

TEST(Markdown, HostileTextIsShownAsItWasWherePostedTextGoes) {
    const std::string text = markdown_text(kHostile);
    // In a paragraph, and at the start of a list item, a heading's or a quote's place.
    for (const std::string& where : {std::string(""), std::string("- "), std::string("1. ")}) {
        SCOPED_TRACE("after '" + where + "'");
        const std::string html = rendered(where + text + "\n");
        const auto tags = tags_of(html);
        const std::multiset<std::string> expected =
            where.empty()   ? std::multiset<std::string>{"p", "/p"}
            : where == "- " ? std::multiset<std::string>{"ul", "/ul", "li", "/li"}
                            : std::multiset<std::string>{"ol", "/ol", "li", "/li"};
        EXPECT_EQ(tags, expected) << html;
        EXPECT_EQ(text_of(html), shown(kHostile)) << html;
    }
    // One line.
    EXPECT_EQ(text.find('\n'), std::string::npos);
    // Prose stays readable: a path, a sentence's parentheses and colons, snake_case.
    EXPECT_EQ(markdown_text("verify: ./test_calc.sh failed (exit 1)."),
              "verify: ./test_calc.sh failed (exit 1).");
}

// What an attack on the escaper found: an `_` beside Unicode punctuation or spaces made
// emphasis; an empty code span left two backticks a later span closed on, its text read as
// HTML; four blanks before a list item's text made a code block.
TEST(Markdown, WhatAnAttackFoundRendersAsText) {
    for (const std::string& text :
         {std::string("\u3002_x_\u3002"), std::string("\uff08_x_\uff09"),
          std::string("\u00bb_x_\u00ab"), std::string("Keep it\u00a0_secret_\u00a0now"),
          std::string("\u3000_y_\u3000"), std::string("\xff_x_\xff")}) {
        const std::string html = rendered("- " + markdown_text(text) + "\n");
        EXPECT_EQ(tags_of(html), (std::multiset<std::string>{"ul", "/ul", "li", "/li"})) << html;
    }
    const std::string spans = "Pull requests: " + markdown_code("") + ": [x](https://e/1) " +
                              markdown_code("<img src=x onerror=alert(1)>") + "\n";
    const std::string html = rendered(spans);
    EXPECT_EQ(tags_of(html),
              (std::multiset<std::string>{"p", "/p", "code", "/code", "code", "/code", "a", "/a"}))
        << html;
    EXPECT_EQ(html.find("<img"), std::string::npos) << html;
    for (const std::string& blanks :
         {std::string("    "), std::string("\t\t\t\t"), std::string("\n\n\n\n")}) {
        const std::string item = rendered("- " + markdown_text(blanks + "x") + "\n");
        EXPECT_EQ(tags_of(item), (std::multiset<std::string>{"ul", "/ul", "li", "/li"})) << item;
        EXPECT_EQ(text_of(item), "x");
    }
    // An ordered list's number is found once, however many dots follow it.
    EXPECT_EQ(markdown_text("10. ten"), "10\\. ten");
    EXPECT_EQ(markdown_text(" 1) one"), "1\\) one");
    EXPECT_EQ(markdown_text("2026.11.28"), "2026\\.11.28");
}

TEST(Markdown, ATableKeepsItsColumnsWhateverItsCellsSay) {
    const std::string table = "| name | path |\n|---|---|\n| " + markdown_text(kHostile) + " | " +
                              markdown_code(kHostile, true) + " |\n";
    const std::string html = rendered(table);
    const auto tags = tags_of(html);
    EXPECT_EQ(tags.count("td"), 2u) << html;
    EXPECT_EQ(tags.count("th"), 2u) << html;
    EXPECT_EQ(tags.count("tr"), 2u) << html;
    EXPECT_EQ(tags.count("code"), 1u) << html;
    const auto cells = html.substr(html.find("<tbody>"));
    const auto first = cells.find("<td>"), second = cells.find("<td>", first + 1);
    ASSERT_NE(second, std::string::npos) << html;
    EXPECT_EQ(text_of(cells.substr(first, second - first)), shown(kHostile)) << html;
    // The code span's text as it was (CommonMark takes off the one space each side it adds).
    EXPECT_EQ(text_of(cells.substr(second, cells.find("</td>", second) - second)), shown(kHostile))
        << html;
}

TEST(Markdown, ACodeSpanHoldsAnyRunOfBackticks) {
    for (const std::string& text :
         {std::string("a ``` b"), std::string("`start"), std::string("end`"), std::string("``")}) {
        const std::string html = rendered(markdown_code(text) + "\n");
        EXPECT_EQ(tags_of(html), (std::multiset<std::string>{"p", "/p", "code", "/code"})) << html;
        EXPECT_EQ(text_of(html), text) << html;
    }
}

TEST(Markdown, ALinkIsOneLinkToWhereItSaid) {
    const std::string url = "https://example.invalid/a b)(c\"d<e>|f`g\\h";
    const std::string html = rendered(markdown_link("logs", url) + "\n");
    EXPECT_EQ(tags_of(html), (std::multiset<std::string>{"p", "/p", "a", "/a"})) << html;
    EXPECT_NE(html.find("href=\"https://example.invalid/a%20b%29%28c%22d%3Ce%3E%7Cf%60g%5Ch\""),
              std::string::npos)
        << html;
    EXPECT_EQ(text_of(html), "logs");
    // Not a web address: the label alone.
    EXPECT_EQ(markdown_link("logs", "javascript:alert(1)"), "logs");
}

TEST(Markdown, HtmlTextIsTextInsideAnElement) {
    const std::string html =
        rendered("<details><summary>" + html_text(kHostile) + "</summary>\n\nbody\n</details>\n");
    EXPECT_EQ(tags_of(html),
              (std::multiset<std::string>{"details", "/details", "summary", "/summary", "p", "/p"}))
        << html;
}

// A verdict whose every name is hostile renders as a report of the same shape as a plain one.
TEST(Markdown, AReportOfHostileNamesHasThePlainReportsShape) {
    auto verdict_named = [](const std::string& name) {
        check::Verdict v;
        v.issue = 1;
        v.agent = name;
        v.branch = "cocode/1-" + name;
        v.pass = false;
        check::CheckItem item;
        item.id = "verify";
        item.name = name;
        item.outcome = check::Outcome::fail;
        item.reason = name;
        item.output_tail = name;
        v.checks.push_back(item);
        v.files.push_back({name, "", 'M', 1, 0, false});
        return v;
    };
    const auto plain = verdict_named("plain");
    const auto hostile = verdict_named(kHostile);
    EXPECT_EQ(tags_of(rendered(check::render_markdown(hostile))),
              tags_of(rendered(check::render_markdown(plain))));
    EXPECT_EQ(tags_of(rendered(check::render_summary(1, {hostile, plain}))),
              tags_of(rendered(check::render_summary(1, {plain, plain}))));
}

}  // namespace
}  // namespace cocode
