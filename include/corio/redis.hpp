// The Redis client layer in one include (corio::redis; link corio::redis).
#pragma once

#include <corio/redis/client.hpp>
#include <corio/redis/pool.hpp>
#include <corio/redis/reply.hpp>
#include <corio/redis/subscriber.hpp>
