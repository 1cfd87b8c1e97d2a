// Basic ids shared by the KV manager and the layers above it: token ids, block ids and the
// reserved null block. Plain integers so that the scheduler and runner pass them around freely.
#pragma once

#include <cstdint>

namespace pagoda {

using TokenId = int32_t;
using BlockId = int32_t;

// Block 0 is never handed out: it stands for "no block" in block tables (padding, and later
// the skipped blocks of sliding-window layers), as in vLLM.
inline constexpr BlockId kNullBlockId = 0;

}  // namespace pagoda
