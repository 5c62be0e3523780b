#include "ui/assets.h"

namespace cocode::ui {

const std::vector<Asset>& assets() {
    static const std::vector<Asset> all = {
#include "ui_assets.inc"
    };
    return all;
}

const Asset* find_asset(std::string_view name) {
    for (const auto& a : assets())
        if (a.name == name) return &a;
    return nullptr;
}

}  // namespace cocode::ui
