// The decoder components of decoder.h.
#include "tokenizer/decoder.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "tokenizer/unicode.h"

namespace slipway::tokenizer {
namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
    if (from.empty()) return;
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
        s.replace(at, from.size(), to);
    }
}

class ByteLevelDecoder : public Decoder {
public:
    void decode_chain(std::vector<std::string>& tokens) const override {
        const ByteLevelAlphabet& alphabet = byte_level_alphabet();
        std::string bytes;
        for (const std::string& token : tokens) {
            // A token with a character outside the byte alphabet keeps its own UTF-8 bytes (HF does this).
            std::string mapped;
            bool all_mapped = true;
            for (size_t i = 0; i < token.size();) {
                const size_t n =
                    std::min(utf8_sequence_length(static_cast<unsigned char>(token[i])), token.size() - i);
                char32_t cp = 0;
                if (n == 1) {
                    cp = static_cast<unsigned char>(token[i]);
                } else if (n == 2) {
                    cp = ((token[i] & 0x1F) << 6) | (token[i + 1] & 0x3F);
                } else {
                    cp = 0xFFFF;  // 3- and 4-byte characters are never in the alphabet
                }
                if (cp >= alphabet.char_to_byte.size() || alphabet.char_to_byte[cp] < 0) {
                    all_mapped = false;
                    break;
                }
                mapped += static_cast<char>(alphabet.char_to_byte[cp]);
                i += n;
            }
            bytes += all_mapped ? mapped : token;
        }
        tokens.assign(1, utf8_lossy(bytes));
    }
};

class ReplaceDecoder : public Decoder {
public:
    ReplaceDecoder(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}
    void decode_chain(std::vector<std::string>& tokens) const override {
        for (std::string& t : tokens)
            replace_all(t, from_, to_);
    }

private:
    std::string from_, to_;
};

class ByteFallbackDecoder : public Decoder {
public:
    void decode_chain(std::vector<std::string>& tokens) const override {
        std::vector<std::string> out;
        std::string pending;  // bytes of consecutive <0xNN> tokens
        auto flush = [&] {
            if (pending.empty()) return;
            if (is_valid_utf8(pending)) {
                out.push_back(pending);
            } else {
                for (size_t i = 0; i < pending.size(); ++i)
                    out.push_back("\xEF\xBF\xBD");
            }
            pending.clear();
        };
        for (std::string& token : tokens) {
            if (token.size() == 6 && token.compare(0, 3, "<0x") == 0 && token[5] == '>') {
                const std::string hex = token.substr(3, 2);
                if (std::isxdigit(static_cast<unsigned char>(hex[0])) &&
                    std::isxdigit(static_cast<unsigned char>(hex[1]))) {
                    pending += static_cast<char>(std::stoi(hex, nullptr, 16));
                    continue;
                }
            }
            flush();
            out.push_back(std::move(token));
        }
        flush();
        tokens = std::move(out);
    }
};

class FuseDecoder : public Decoder {
public:
    void decode_chain(std::vector<std::string>& tokens) const override {
        std::string joined;
        for (const std::string& t : tokens)
            joined += t;
        tokens.assign(1, joined);
    }
};

class StripDecoder : public Decoder {
public:
    StripDecoder(std::string content, size_t start, size_t stop)
        : content_(std::move(content)), start_(start), stop_(stop) {}
    void decode_chain(std::vector<std::string>& tokens) const override {
        for (std::string& t : tokens) {
            size_t begin = 0;
            for (size_t i = 0; i < start_ && t.compare(begin, content_.size(), content_) == 0; ++i)
                begin += content_.size();
            size_t end = t.size();
            for (size_t i = 0; i < stop_ && end >= begin + content_.size() &&
                               t.compare(end - content_.size(), content_.size(), content_) == 0;
                 ++i) {
                end -= content_.size();
            }
            t = t.substr(begin, end - begin);
        }
    }

private:
    std::string content_;
    size_t start_, stop_;
};

class MetaspaceDecoder : public Decoder {
public:
    MetaspaceDecoder(std::string replacement, bool strip_first)
        : replacement_(std::move(replacement)), strip_first_(strip_first) {}
    void decode_chain(std::vector<std::string>& tokens) const override {
        for (size_t i = 0; i < tokens.size(); ++i) {
            // As HF: in the first token every replacement character is dropped, not only a leading one.
            replace_all(tokens[i], replacement_, i == 0 && strip_first_ ? "" : " ");
        }
    }

private:
    std::string replacement_;
    bool strip_first_;
};

class SequenceDecoder : public Decoder {
public:
    explicit SequenceDecoder(std::vector<std::shared_ptr<const Decoder>> parts) : parts_(std::move(parts)) {}
    void decode_chain(std::vector<std::string>& tokens) const override {
        for (const auto& p : parts_)
            p->decode_chain(tokens);
    }

private:
    std::vector<std::shared_ptr<const Decoder>> parts_;
};

}  // namespace

Result<std::shared_ptr<const Decoder>> make_decoder(const nlohmann::json& spec) {
    using Ptr = std::shared_ptr<const Decoder>;
    if (spec.is_null()) return Ptr();
    try {
        const std::string type = spec.at("type").get<std::string>();
        if (type == "ByteLevel") return Ptr(std::make_shared<ByteLevelDecoder>());
        if (type == "ByteFallback") return Ptr(std::make_shared<ByteFallbackDecoder>());
        if (type == "Fuse") return Ptr(std::make_shared<FuseDecoder>());
        if (type == "Replace") {
            const nlohmann::json& pattern = spec.at("pattern");
            if (!pattern.contains("String"))
                return Status::Error("decoder Replace: only String patterns are supported");
            return Ptr(std::make_shared<ReplaceDecoder>(pattern["String"].get<std::string>(),
                                                        spec.at("content").get<std::string>()));
        }
        if (type == "Strip") {
            return Ptr(std::make_shared<StripDecoder>(spec.at("content").get<std::string>(),
                                                      spec.at("start").get<size_t>(),
                                                      spec.at("stop").get<size_t>()));
        }
        if (type == "Metaspace") {
            bool strip_first = spec.value("add_prefix_space", true);
            if (spec.contains("prepend_scheme"))
                strip_first = spec["prepend_scheme"].get<std::string>() != "never";
            return Ptr(
                std::make_shared<MetaspaceDecoder>(spec.at("replacement").get<std::string>(), strip_first));
        }
        if (type == "Sequence") {
            std::vector<Ptr> parts;
            for (const nlohmann::json& part : spec.at("decoders")) {
                Result<Ptr> made = make_decoder(part);
                if (!made.ok()) return made.status();
                if (*made) parts.push_back(*made);
            }
            return Ptr(std::make_shared<SequenceDecoder>(std::move(parts)));
        }
        return Status::Error("decoder \"" + type + "\" is not supported");
    } catch (const nlohmann::json::exception& e) {
        return Status::Error(std::string("decoder: ") + e.what());
    }
}

}  // namespace slipway::tokenizer
