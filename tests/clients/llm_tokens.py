# redis_guard: 10,000 tokens a day for one API key. An answer's cost is
# known only at its end: reserve the most it may cost, refund the rest.
import os

import redis

from redis_guard import Guard

g = Guard(redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379")))
key, limit = "tokens:key:7", (9_999, 10_000, 86_400)  # burst 10,000, 10,000 a day
MAX_TOKENS = 4_000


def generate(prompt: str) -> int:
    return 1_250  # the tokens the model really used


for prompt in ["first", "second", "third"]:
    reserved = g.throttle(key, *limit, quantity=MAX_TOKENS)
    if reserved.limited:
        print(prompt, "refused: retry in", reserved.retry_after, "s")
        continue
    used = generate(prompt)
    after = g.refund(key, *limit, MAX_TOKENS - used)
    print(prompt, "used", used, "->", after.remaining, "left")
