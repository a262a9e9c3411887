// SPDX-License-Identifier: Apache-2.0
// The hash source of a Content-Security-Policy (CSP Level 2, "'sha256-<base64>'"): what lets the
// status page's own inline script and style run while anything else inline (an injected
// attribute handler, a script a later bug might let in) does not. SHA-256 (FIPS 180-4) and
// base64 (RFC 4648, with padding), small enough to keep here rather than pull in a crypto
// library for one constant page.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace memdiag::http {

std::array<std::uint8_t, 32> sha256(std::string_view data);

std::string base64(std::string_view bytes);

// "'sha256-...'" for the text of an inline <script> or <style> element, exactly as it appears
// between its tags.
std::string csp_hash_source(std::string_view element_text);

}  // namespace memdiag::http
