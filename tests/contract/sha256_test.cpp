// sha256_hex against `sha256sum` of the same bytes: the empty string, FIPS 180-4's "abc", lengths either
// side of a block's padding boundary (55, 56, 64 bytes) and a message of many blocks.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "contract/sha256.h"

namespace slipway {
namespace {

TEST(Sha256, EqualsSha256sumAcrossThePaddingBoundaries) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex(std::string(55, 'x')),
              "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
    EXPECT_EQ(sha256_hex(std::string(56, 'x')),
              "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e");
    EXPECT_EQ(sha256_hex(std::string(64, 'y')),
              "ffbf30ab94107b2c14d75cfb455ec94f200400ddc5ce304e0c21894090db055f");
    EXPECT_EQ(sha256_hex(std::string(1000, 'a')),
              "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

TEST(Sha256, EveryByteValueCounts) {
    std::string all;
    for (int c = 0; c < 256; ++c)
        all += static_cast<char>(c);
    // printf '\x00'...'\xff' | sha256sum
    EXPECT_EQ(sha256_hex(all), "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880");
}

}  // namespace
}  // namespace slipway
