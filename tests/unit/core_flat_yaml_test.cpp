#include "core/flat_yaml.h"
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

TEST(FlatYaml, ErrorsNameTheLine) {
    auto r = FlatYaml::parse("run_id: x\n  nested: y\n", "runs/x/run-info.yaml");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "runs/x/run-info.yaml:2: expected `key: value`");
    auto q = FlatYaml::parse("a: 1\nb: \"unterminated\n", "f");
    ASSERT_FALSE(q);
    EXPECT_NE(q.error().message.find("f:2:"), std::string::npos);
}

}  // namespace cocode
