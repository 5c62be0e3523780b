// SHA-256, in hex: of a string at once, or of bytes fed in pieces (a file of any size).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace cocode {

std::string sha256_hex(std::string_view data);

class Sha256 {
  public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void add(std::string_view data);
    std::string hex();  // once: the digest of everything added

  private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace cocode
