"""The least a pure-Python decision cycle could cost over the (a) queue's scale, for scale:
10,000 jobs on 100 pools and 1,000 policies, each looked up, its demand tested key by key
against its pool's and its policy's free amounts, and a memoised reason stored (or the job
admitted). No victim search, no held room, no bypass watch: none of the rules `schedule`
applies, so this is a floor for comparison, not a scheduler.

    python bench/cycle_floor.py        # prints the p50 and least of 15 cycles, CPU time
"""

from __future__ import annotations

import random
import statistics
import time

Amounts = dict[str, int]


def build(seed: int = 1) -> tuple[list[Amounts], list[Amounts], list[Amounts], list[Amounts], list]:
    rng = random.Random(seed)
    capacity = [{"gpu": 64, "cpu": 512, "step_run": 64} for _ in range(100)]
    used = [{"gpu": 60, "cpu": 480, "step_run": 40} for _ in range(100)]  # busy: ~90% full
    policy_used = [{"gpu": rng.randint(0, 40), "cpu": 0, "step_run": 0} for _ in range(1000)]
    policy_limit = [{"gpu": 32} for _ in range(1000)]
    jobs = []
    for job in range(10_000):
        gpus = rng.choice((1, 1, 1, 2, 2, 4, 8))
        policy = rng.randrange(1000)
        demand = (("cpu", 4 * gpus), ("gpu", gpus), ("step_run", 1))
        jobs.append((job, policy // 10, policy, demand))
    return capacity, used, policy_used, policy_limit, jobs


def cycle(capacity, used, policy_used, policy_limit, jobs) -> dict:  # type: ignore[no-untyped-def]
    reasons: dict[int, object] = {}
    memo: dict[tuple, object] = {}
    for job, pool, policy, demand in jobs:
        free, taken, mine, limit = (
            capacity[pool],
            used[pool],
            policy_used[policy],
            policy_limit[policy],
        )
        short = None
        for key, need in demand:
            if taken[key] + need > free.get(key, 0):
                short = ("pool", key, taken[key] + need - free[key])
                break
            bound = limit.get(key)
            if bound is not None and mine[key] + need > bound:
                short = ("limit", key, mine[key] + need - bound)
                break
        if short is None:
            for key, need in demand:
                taken[key] += need
                mine[key] += need
            reasons[job] = None
            continue
        found = memo.get((pool, policy, short))
        if found is None:
            found = memo[pool, policy, short] = {"code": short[0], "detail": {short[1]: short[2]}}
        reasons[job] = found
    return reasons


def main() -> None:
    times = []
    for _ in range(15):
        capacity, used, policy_used, policy_limit, jobs = build()
        start = time.process_time()
        cycle(capacity, used, policy_used, policy_limit, jobs)
        times.append(time.process_time() - start)
    print(
        f"floor cycle over 10,000 jobs: CPU p50 {statistics.median(times) * 1000:.1f} ms, "
        f"least {min(times) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
