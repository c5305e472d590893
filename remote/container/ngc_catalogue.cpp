// Loading the NGC PyTorch catalogue (see ngc_catalogue.h).
#include "remote/container/ngc_catalogue.h"

#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

namespace slipway::remote {

std::string NgcImage::summary() const {
    std::string text;
    auto add = [&text](const char* label, const std::string& value) {
        if (value.empty()) return;
        if (!text.empty()) text += ", ";
        text += std::string(label) + " " + value;
    };
    add("Ubuntu", ubuntu);
    add("Python", python);
    add("CUDA", cuda);
    add("torch", torch);
    add("NCCL", nccl);
    return text;
}

const NgcImage* NgcCatalogue::find(const std::string& tag) const {
    for (const NgcImage& image : images) {
        if (image.tag == tag) return &image;
    }
    return nullptr;
}

Result<NgcCatalogue> load_ngc_catalogue(const std::string& path) {
    std::ifstream in(path);
    if (!in) return Status::Error(path + ": cannot read the NGC catalogue");
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
    if (doc.is_discarded()) return Status::Error(path + ": not valid JSON");
    if (!doc.is_object() || !doc.contains("images") || !doc["images"].is_array())
        return Status::Error(path + ": expected {\"images\": [...]}");
    NgcCatalogue catalogue;
    static const std::regex tag_pattern("[0-9]{2}\\.[0-9]{2}");
    for (size_t i = 0; i < doc["images"].size(); ++i) {
        const nlohmann::json& item = doc["images"][i];
        const std::string where = path + ": images[" + std::to_string(i) + "]";
        if (!item.is_object()) return Status::Error(where + ": must be an object");
        NgcImage image;
        const std::pair<const char*, std::string*> fields[] = {
            {"tag", &image.tag},      {"ubuntu", &image.ubuntu}, {"python", &image.python},
            {"cuda", &image.cuda},    {"torch", &image.torch},   {"nccl", &image.nccl},
            {"source", &image.source}};
        for (const auto& [key, target] : fields) {
            if (!item.contains(key) || item[key].is_null()) continue;
            if (!item[key].is_string())
                return Status::Error(where + "." + key + ": must be a string or null");
            *target = item[key].get<std::string>();
        }
        if (!std::regex_match(image.tag, tag_pattern))
            return Status::Error(where + ".tag: must be YY.MM, got \"" + image.tag + "\"");
        if (image.source.empty()) return Status::Error(where + ".source: say where the numbers come from");
        if (catalogue.find(image.tag)) return Status::Error(where + ": tag " + image.tag + " listed twice");
        catalogue.images.push_back(std::move(image));
    }
    return catalogue;
}

std::optional<std::string> ngc_pytorch_tag(const std::string& image) {
    static const std::regex ngc("nvcr\\.io/nvidia/pytorch:([0-9]{2}\\.[0-9]{2})-py3");
    std::smatch m;
    if (!std::regex_match(image, m, ngc)) return std::nullopt;
    return m[1].str();
}

}  // namespace slipway::remote
