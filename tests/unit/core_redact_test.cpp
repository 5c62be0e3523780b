
#include "core/redact.h"
#include "test_support.h"

namespace cocode {

struct Case {
    std::string input, expected;
};

TEST(Redact, HidesEveryKindOfSecretWeKnow) {
    const std::string gh36 = "abcdefghijklmnopqrstuvwxyz0123456789";
    const std::vector<Case> cases = {
        {"token ghp_" + gh36 + " end", "token ghp_[REDACTED] end"},
        {"gho_" + gh36, "gho_[REDACTED]"},
        {"x=ghu_" + gh36, "x=ghu_[REDACTED]"},
        {"ghs_" + gh36 + ".", "ghs_[REDACTED]."},
        {"ghr_" + gh36, "ghr_[REDACTED]"},
        {"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_[REDACTED]"},
        {"OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz123456", "OPENAI_API_KEY=sk-[REDACTED]"},
        {"key sk-ant-api03-abcdefghijklmnopqrstuvwxyz-AB_CD", "key sk-[REDACTED]"},
        {"Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.payload.sig",
         "Authorization: Bearer [REDACTED]"},
        {"authorization: token 0123456789abcdef0123456789abcdef01234567",
         "authorization: token [REDACTED]"},
        {"curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='",
         "curl -H 'Authorization: Basic [REDACTED]'"},
        {"sent bearer abcdefgh12345678 ok", "sent bearer [REDACTED] ok"},
        {"AKIAIOSFODNN7EXAMPLE", "AKIA[REDACTED]"},
        {"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "aws_secret_access_key = [REDACTED]"},
        {"AIzaSyA1234567890abcdefghijklmnopqrstu", "AIza[REDACTED]"},
        {"https://user:hunter22@github.com/o/r.git", "https://user:[REDACTED]@github.com/o/r.git"},
        {"https://x-access-token:ghs_" + gh36 + "@github.com",
         "https://x-access-token:[REDACTED]@github.com"},
        {"a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----\nb",
         "a\n[REDACTED PRIVATE KEY]\nb"},
        {"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r", "[REDACTED PRIVATE KEY]"},
    };
    for (const Case& c : cases) EXPECT_EQ(redact(c.input), c.expected) << c.input;
}

TEST(Redact, LeavesOrdinaryTextAlone) {
    const std::vector<std::string> plain = {
        "git commit -m 'cocode ready for check'",
        "https://github.com/org/repo/issues/123",
        "the task-runner's skill set",                                   // sk- inside a word, short
        "ghp_short",                                                     // too short to be a token
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",  // public
        "http://localhost:8080/path",                                    // a port is not a password
        "Bearer of bad news",
    };
    for (const std::string& s : plain) EXPECT_EQ(redact(s), s);
}

TEST(Redact, KnownSecretValuesAreHiddenWhereverTheyAppear) {
    // A token that looks like nothing in particular: only knowing it finds it.
    EXPECT_EQ(redact("echo plainlooking-token-value-XYZ; short"),
              "echo plainlooking-token-value-XYZ; short");
    remember_secret("plainlooking-token-value-XYZ");
    remember_secret("short");  // ignored: too short to be a secret worth blanking
    EXPECT_EQ(redact("echo plainlooking-token-value-XYZ; short"), "echo [REDACTED]; short");
}

TEST(Redact, IsLinearOnMegabytesOfAgentOutput) {
    // Every line starts a candidate of each pattern and completes none: a scan that went back
    // over the text would take minutes on 8 MB and meet the suite's per-test timeout; a linear
    // one takes well under a second. What is asserted here is the text that comes out.
    const std::string line = "Authorization: aaaa bbbb https://a:b ghp_ sk- -----BEGIN \n";
    std::string big;
    while (big.size() < (8u << 20)) big += line;
    std::string out = redact(big);
    EXPECT_EQ(out.size() % redact(line).size(), 0u);
    EXPECT_EQ(out.substr(0, redact(line).size()), redact(line));
    EXPECT_EQ(out.find("aaaa bbbb"), std::string::npos);  // the credential after the scheme
}

}  // namespace cocode
