// The PostgreSQL client layer in one include (corio::pg; link corio::pg).
#pragma once

#include <corio/pg/connection.hpp>
#include <corio/pg/copy.hpp>
#include <corio/pg/error.hpp>
#include <corio/pg/pool.hpp>
#include <corio/pg/result.hpp>
#include <corio/pg/stream.hpp>
#include <corio/pg/transaction.hpp>
#include <corio/pg/value.hpp>
