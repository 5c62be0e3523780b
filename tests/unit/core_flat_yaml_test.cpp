#include "core/flat_yaml.h"
#include "core/run_id.h"
#include "test_support.h"

namespace cocode {

TEST(FlatYaml, ReadsWhatConductorLoopWrites) {
    auto doc = FlatYaml::parse(
        "version: 1\nrun_id: 20260101-000000000-1-1\nparent_run_id: \"\"\nexit_code: -1\n"
        "status: running\n# comment\ncwd: '/tmp/it''s'\nend_time:\n",
        "run-info.yaml");
    ASSERT_TRUE(doc) << doc.error().message;
    EXPECT_EQ(doc->get("run_id"), "20260101-000000000-1-1");
    EXPECT_EQ(doc->get("parent_run_id"), "");
    EXPECT_EQ(doc->get("exit_code"), "-1");
    EXPECT_EQ(doc->get("cwd"), "/tmp/it's");
    EXPECT_EQ(doc->get("end_time"), "");
    EXPECT_FALSE(doc->get("missing"));
}

TEST(FlatYaml, RoundTripsValuesThatCouldBeMisread) {
    FlatYaml doc;
    doc.set("commit", "1234567");  // all digits: must stay a string
    doc.set("flag", "true");
    doc.set("marker", "cocode ready for check");
    doc.set("weird", "a: b # c \"q\" \\ \n\t\x01");
    doc.set_number("exit_code", 124);
    std::string text = doc.render();
    EXPECT_NE(text.find("commit: \"1234567\""), std::string::npos) << text;
    EXPECT_NE(text.find("exit_code: 124\n"), std::string::npos) << text;
    EXPECT_NE(text.find("marker: cocode ready for check\n"), std::string::npos) << text;
    auto back = FlatYaml::parse(text, "x");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->get("commit"), "1234567");
    EXPECT_EQ(back->get("flag"), "true");
    EXPECT_EQ(back->get("weird"), "a: b # c \"q\" \\ \n\t\x01");
    EXPECT_EQ(back->render(), text);
}

// Found by fuzzing: a value holding NEL, LS or PS came back with a space where they were (a
// YAML reader folds them as line breaks), and a C1 control or a byte that is not UTF-8 made
// the whole file unreadable (a YAML reader refuses both) -- an agent's stderr in the error
// summary was enough to lose the run's record.
TEST(FlatYaml, WhatItWritesAnyYamlReaderReadsBack) {
    FlatYaml doc;
    const std::string breaks =
        "a\xc2\x85"
        "b\xe2\x80\xa8"
        "c\xe2\x80\xa9"
        "d";
    doc.set("breaks", breaks);
    doc.set("c1", "csi \xc2\x9b 31m, del \x7f, bom \xef\xbb\xbf, e\xcc\x81t\xc3\xa9");
    doc.set("error_summary", "cut \xe2\x80 mid-sequence, stray \xff");
    auto back = FlatYaml::parse(doc.render(), "x");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->get("breaks"), breaks);
    EXPECT_EQ(back->get("c1"), "csi \xc2\x9b 31m, del \x7f, bom \xef\xbb\xbf, e\xcc\x81t\xc3\xa9");
    EXPECT_EQ(back->get("error_summary"),
              "cut \xef\xbf\xbd\xef\xbf\xbd mid-sequence, stray \xef\xbf\xbd");
}

TEST(FlatYaml, ReadsBlockScalarsAndNanosecondTimesAsGoYamlWritesThem) {
    // gopkg.in/yaml.v3 writes a multi-line string as a literal block, times in RFC 3339.
    auto doc = FlatYaml::parse(
        "run_id: 20260205-150405123-12345-1\n"
        "start_time: 2026-02-05T15:04:05.123456789Z\n"
        "end_time: 2026-02-05T16:04:05.5+02:00\n"
        "error_summary: |-\n"
        "    agent exited with code 1\n"
        "    stderr: boom\n"
        "status: failed\n"
        "labels:\n  - a\n  - b\n"
        "exit_code: 1\n",
        "run-info.yaml");
    ASSERT_TRUE(doc) << doc.error().message;
    EXPECT_EQ(doc->get("error_summary"), "agent exited with code 1\nstderr: boom");
    EXPECT_EQ(doc->get("start_time"), "2026-02-05T15:04:05.123456789Z");
    EXPECT_EQ(doc->get("exit_code"), "1");
    EXPECT_FALSE(doc->get("labels"));  // not a scalar: not one of run-info's
    auto start = parse_utc_timestamp(*doc->get("start_time"));
    ASSERT_TRUE(start.has_value());
    EXPECT_EQ(format_utc_timestamp(*start), "2026-02-05T15:04:05.123Z");
    auto end = parse_utc_timestamp(*doc->get("end_time"));
    ASSERT_TRUE(end.has_value());
    EXPECT_EQ(format_utc_timestamp(*end), "2026-02-05T14:04:05.500Z");
}

TEST(FlatYaml, ErrorsNameTheLine) {
    auto r = FlatYaml::parse("run_id: x\n  nested: y\n", "runs/x/run-info.yaml");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message,
              "runs/x/run-info.yaml:2: mapping values are not allowed in this context");
    auto q = FlatYaml::parse("a: 1\nb: \"unterminated\n", "f");
    ASSERT_FALSE(q);
    EXPECT_EQ(q.error().message,
              "f:3: found unexpected end of stream (while scanning a quoted scalar at line 2)");
    auto list = FlatYaml::parse("- a\n- b\n", "g");
    ASSERT_FALSE(list);
    EXPECT_EQ(list.error().message, "g:1: expected `key: value` lines");
}

}  // namespace cocode
