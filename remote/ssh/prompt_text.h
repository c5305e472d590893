// Text that an SSH server sends for a person to read (keyboard-interactive name, instruction and prompts,
// banners), made safe to show: a server must not be able to move the cursor, retitle the window, rewrite
// what the terminal shows before the prompt, or hide text with bidirectional overrides. The CLI and the
// GUI's sign-in dialog both show server text only through printable_prompt_text().
#pragma once

#include <string>
#include <string_view>

namespace slipway::remote {

// `text` with control characters removed: C0 controls except '\n' and '\t' (so '\r', '\b', BEL go), DEL,
// C1 controls (U+0080-U+009F), whole escape sequences (ESC [ ... final byte, ESC ] ... BEL or ST, and the
// other ESC forms, also when introduced by the C1 CSI/OSC/DCS code points) and the bidirectional
// embedding/override/isolate marks (U+202A-U+202E, U+2066-U+2069). Bytes that are not valid UTF-8 become
// '?', so a terminal in an 8-bit locale cannot read a stray 0x9B as CSI.
std::string printable_prompt_text(std::string_view text);

}  // namespace slipway::remote
