// The protobuf wire format, write side only, for the few messages the trackers' files need (TensorBoard's
// Event and Summary). No protobuf library: a message is its fields' bytes, appended in field order.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace slipway::track {

class ProtoMessage {
public:
    ProtoMessage& varint(int field, uint64_t value) {
        key(field, kVarint);
        put_varint(value);
        return *this;
    }
    ProtoMessage& int64(int field, int64_t value) { return varint(field, static_cast<uint64_t>(value)); }
    ProtoMessage& boolean(int field, bool value) { return varint(field, value ? 1 : 0); }
    ProtoMessage& float64(int field, double value) {
        key(field, kFixed64);
        put_fixed(value);
        return *this;
    }
    ProtoMessage& float32(int field, float value) {
        key(field, kFixed32);
        put_fixed(value);
        return *this;
    }
    // A string, bytes or an embedded message.
    ProtoMessage& bytes(int field, std::string_view value) {
        key(field, kLengthDelimited);
        put_varint(value.size());
        bytes_.append(value);
        return *this;
    }
    ProtoMessage& message(int field, const ProtoMessage& value) { return bytes(field, value.bytes_); }

    const std::string& serialized() const { return bytes_; }

private:
    enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

    void key(int field, WireType type) { put_varint((static_cast<uint64_t>(field) << 3) | type); }
    void put_varint(uint64_t value) {
        while (value >= 0x80) {
            bytes_.push_back(static_cast<char>((value & 0x7F) | 0x80));
            value >>= 7;
        }
        bytes_.push_back(static_cast<char>(value));
    }
    template <typename T>
    void put_fixed(T value) {  // little-endian, as x86 and ARM store it
        char raw[sizeof(T)];
        std::memcpy(raw, &value, sizeof(T));
        bytes_.append(raw, sizeof(T));
    }

    std::string bytes_;
};

}  // namespace slipway::track
