/// \file
/// Moved to <corio/json/parse.hpp> (the json layer, below http and mcp); this
/// path keeps working until 1.0.
#pragma once

#include <corio/json/parse.hpp>
