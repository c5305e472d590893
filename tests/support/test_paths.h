// Where a test finds the checkout, its data and the binaries it runs. The build writes these paths into one
// generated source (test_paths.cmake), so that no other compile depends on where the checkout is: a fresh
// clone then compiles its tests from ccache instead of again.
#pragma once

namespace test_paths {

// Each returns its folder or file, followed by `tail` when one is given ("/resources/x"). The strings live
// until the process ends, so they go wherever a string literal did.
const char* source_dir(const char* tail = "");     // the checkout
const char* test_data_dir(const char* tail = "");  // tests/data
const char* binary_dir(const char* tail = "");     // the build folder
const char* reference_dir(const char* tail = "");  // the tokenizer_reference fixture's folder
const char* trained_dir(const char* tail = "");    // the tokenizers that fixture trains
const char* engine_bin();                          // slipway-engine
const char* slipway_bin();                         // slipway (the app's CLI)

}  // namespace test_paths
