// The tools' comma-separated list options (--sizes 30,100, --models a,b): the items, empty ones skipped.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace h3probe::tools {

inline std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

}  // namespace h3probe::tools
