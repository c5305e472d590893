// The normalizer components of normalizer.h.
#include "tokenizer/normalizer.h"

#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

namespace slipway::tokenizer {
namespace {

// NFC or NFKC.
class UnicodeForm : public Normalizer {
public:
    explicit UnicodeForm(std::string (*form)(std::string_view)) : form_(form) {}
    Status normalize(std::string& text) const override {
        text = form_(text);
        return Status::Ok();
    }

private:
    std::string (*form_)(std::string_view);
};

class Prepend : public Normalizer {
public:
    explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
    Status normalize(std::string& text) const override {
        if (!text.empty()) text.insert(0, prefix_);
        return Status::Ok();
    }

private:
    std::string prefix_;
};

// Replace with a literal or regex pattern, every occurrence.
class Replace : public Normalizer {
public:
    Replace(std::shared_ptr<const Regex> regex, std::string content)
        : regex_(std::move(regex)), content_(std::move(content)) {}
    Status normalize(std::string& text) const override {
        std::vector<std::pair<size_t, size_t>> matches;
        if (Status s = regex_->find_all(text, matches); !s.ok())
            return Status::Error("normalizer Replace: " + s.message());
        if (matches.empty()) return Status::Ok();
        std::string out;
        out.reserve(text.size() + matches.size() * content_.size());
        size_t last = 0;
        for (const auto& [begin, end] : matches) {
            out.append(text, last, begin - last);
            out += content_;
            last = end;
        }
        out.append(text, last, std::string::npos);
        text = std::move(out);
        return Status::Ok();
    }

private:
    std::shared_ptr<const Regex> regex_;
    std::string content_;
};

class Sequence : public Normalizer {
public:
    explicit Sequence(std::vector<std::shared_ptr<const Normalizer>> parts) : parts_(std::move(parts)) {}
    Status normalize(std::string& text) const override {
        for (const auto& p : parts_) {
            if (Status s = p->normalize(text); !s.ok()) return s;
        }
        return Status::Ok();
    }

private:
    std::vector<std::shared_ptr<const Normalizer>> parts_;
};

}  // namespace

Result<std::shared_ptr<const Normalizer>> make_normalizer(const nlohmann::json& spec) {
    using Ptr = std::shared_ptr<const Normalizer>;
    if (spec.is_null()) return Ptr();
    try {
        const std::string type = spec.at("type").get<std::string>();
        if (type == "NFC") return Ptr(std::make_shared<UnicodeForm>(&to_nfc));
        if (type == "NFKC") return Ptr(std::make_shared<UnicodeForm>(&to_nfkc));
        if (type == "Prepend") return Ptr(std::make_shared<Prepend>(spec.at("prepend").get<std::string>()));
        if (type == "Replace") {
            const nlohmann::json& pattern = spec.at("pattern");
            const std::string regex_text = pattern.contains("Regex")
                                               ? pattern["Regex"].get<std::string>()
                                               : Regex::escape(pattern.at("String").get<std::string>());
            Result<std::shared_ptr<const Regex>> regex = Regex::compile(regex_text);
            if (!regex.ok()) return Status::Error("normalizer Replace: " + regex.error());
            return Ptr(std::make_shared<Replace>(*regex, spec.at("content").get<std::string>()));
        }
        if (type == "Sequence") {
            std::vector<Ptr> parts;
            for (const nlohmann::json& part : spec.at("normalizers")) {
                Result<Ptr> made = make_normalizer(part);
                if (!made.ok()) return made.status();
                if (*made) parts.push_back(*made);
            }
            return Ptr(std::make_shared<Sequence>(std::move(parts)));
        }
        return Status::Error("normalizer \"" + type + "\" is not supported");
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(std::string("normalizer: ") + e.what());
    }
}

}  // namespace slipway::tokenizer
