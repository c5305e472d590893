// printable_prompt_text: what a server may put in keyboard-interactive prompts and banners reaches the
// terminal or the sign-in dialog as plain text, with every control character and escape sequence removed.
#include <gtest/gtest.h>

#include "remote/ssh/prompt_text.h"

namespace slipway::remote {
namespace {

TEST(PromptText, PlainTextNewlinesTabsAndUnicodeStay) {
    EXPECT_EQ(printable_prompt_text("Verification code: "), "Verification code: ");
    EXPECT_EQ(printable_prompt_text("Line 1\n\tLine 2"), "Line 1\n\tLine 2");
    EXPECT_EQ(printable_prompt_text("Код подтверждения: ✓"), "Код подтверждения: ✓");
    EXPECT_EQ(printable_prompt_text(""), "");
}

TEST(PromptText, C0ControlsAndDelAreRemoved) {
    EXPECT_EQ(printable_prompt_text("Pass\rword\b\a: \x7f"), "Password: ");
    EXPECT_EQ(printable_prompt_text(std::string("a\0b\x01\x1f", 5)), "ab");
    EXPECT_EQ(printable_prompt_text("code\r\n"), "code\n");
}

TEST(PromptText, EscapeSequencesAreRemovedWhole) {
    // Cursor movement and erase: "move up, clear the line" would hide what the terminal showed before.
    EXPECT_EQ(printable_prompt_text("\x1b[1A\x1b[2KPassword: "), "Password: ");
    EXPECT_EQ(printable_prompt_text("\x1b[31;1mred\x1b[0m"), "red");
    // OSC (window title, hyperlinks), ended by BEL or by ESC backslash.
    EXPECT_EQ(printable_prompt_text("\x1b]0;pwned\x07ok"), "ok");
    EXPECT_EQ(printable_prompt_text("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\"), "link");
    // DCS, and the short ESC forms (charset selection, save cursor, full reset).
    EXPECT_EQ(printable_prompt_text("\x1bPq#0;2;0;0;0\x1b\\x"), "x");
    EXPECT_EQ(printable_prompt_text("a\x1b(Bb\x1b"
                                    "7c\x1b"
                                    "cd"),
              "abcd");
    // A sequence cut off at the end of the text.
    EXPECT_EQ(printable_prompt_text("code\x1b[12"), "code");
    EXPECT_EQ(printable_prompt_text("code\x1b"), "code");
}

TEST(PromptText, C1ControlsBidiMarksAndInvalidUtf8) {
    // U+009B is CSI in UTF-8 form; its parameters go with it. U+0085 (NEL) is a C1 control.
    EXPECT_EQ(printable_prompt_text("a\xc2\x9b"
                                    "2Jb\xc2\x85"
                                    "c"),
              "abc");
    EXPECT_EQ(printable_prompt_text("a\xc2\x9d"
                                    "0;title\x07"
                                    "b"),
              "ab");
    // A right-to-left override could make "code" read as "edoc".
    EXPECT_EQ(printable_prompt_text("a\u202Eedoc\u202C b\u2066c\u2069"), "aedoc bc");
    // A raw 0x9B byte is not UTF-8 (an 8-bit terminal would read it as CSI): it becomes '?'.
    EXPECT_EQ(printable_prompt_text("a\x9b"
                                    "2Jb"),
              "a?2Jb");
    EXPECT_EQ(printable_prompt_text("\xff\xc0\xaf"), "???");  // invalid and overlong
}

}  // namespace
}  // namespace slipway::remote
