"""How a tick's frame budget is split between watched rooms: max-min fair.

Building a frame costs CPU in proportion to what a room shows (a 256-partition cluster at 2,000
records/s costs tens of milliseconds, a library scenario about one). The budget per tick is a share
of the frame period (FRAME_BUDGET). Rooms whose frames cost less than an equal split get all they
need — every tick's frame — and what they leave is split equally among the expensive ones, which
then send a frame only every few ticks (``credit`` accumulates their share). So a large room slows
its own frame rate, never a small neighbour's.

Costs are CPU seconds of the runner's thread, not wall time: on a busy machine the wall time of a
frame grows with everybody else's load, and throttling on it would slow every room at once for
something none of them did. The thread's CPU clock is read twice a tick, not around each frame
(``TickCosts``): in a room worker under load one ``time.thread_time()`` took 150 us of wall time on
average (``perf_counter`` 0.2 us), and two per room per tick took more than the frames.
"""
import time

SMOOTHING = 0.3          # weight of the newest measurement in a room's moving-average frame cost
SPIKE = 3.0              # one frame's measured cost counts for at most this many times the estimate

cpu_clock = time.thread_time


class TickCosts:
    """The frames built in one tick, each timed by the wall clock; ``settle`` turns the wall times
    into CPU seconds with the share of the tick's wall time the thread really ran (its CPU clock
    read once at the start and once at the end), so a room is charged for its frame, not for the
    time the machine gave others while it was being built."""

    def __init__(self, clock=cpu_clock, wall=time.perf_counter):
        self.clock, self.wall = clock, wall
        self.cpu_started, self.wall_started = clock(), wall()
        self.frames = []                         # (room, wall seconds, throttled)

    def add(self, room, wall_s, throttled):
        self.frames.append((room, wall_s, throttled))

    def settle(self, account):
        if not self.frames:
            return
        wall_s = self.wall() - self.wall_started
        ran = min(1.0, (self.clock() - self.cpu_started) / wall_s) if wall_s > 0 else 1.0
        for room, frame_wall_s, throttled in self.frames:
            account(room, frame_wall_s * ran, throttled)
        self.frames = []


def frame_shares(costs, budget_s):
    """``{room: share}`` of ``budget_s`` for rooms with these frame costs (seconds): a room costing
    no more than its equal part of what is left gets its cost (``None``: never throttled); the
    others split the rest equally. Rooms not measured yet (cost 0) are never throttled."""
    shares = {}
    left = budget_s
    order = sorted(costs.items(), key=lambda kv: kv[1])
    for i, (room, cost) in enumerate(order):
        fair = left / (len(order) - i)
        if cost > fair:              # this room and every costlier one split what is left
            shares.update((r, fair) for r, _ in order[i:])
            break
        shares[room] = None
        left -= cost
    return shares


def may_send(room, share):
    """Whether ``room`` builds a frame this tick, given its share (None: always). A throttled room
    earns its share each tick (capped, so a long wait does not bank a burst) and sends when it
    has earned what a frame costs."""
    if share is None:
        room.frame_credit = 0.0
        return True
    room.frame_credit = min(room.frame_credit + share, 2 * max(room.frame_cost_s, share))
    return room.frame_credit >= room.frame_cost_s


def account(room, cost_s, throttled):
    """Record what the frame just built cost. One measurement counts for at most SPIKE times the
    current estimate (plus a millisecond): a garbage collection or a page-fault storm that lands in
    one small room's frame is not that room's cost, and must not throttle it for the next dozen
    ticks. A room that really grew still reaches its new cost within a few frames."""
    if room.frame_cost_s > 0:
        cost_s = min(cost_s, SPIKE * room.frame_cost_s + 0.001)
    room.frame_cost_s = (1 - SMOOTHING) * room.frame_cost_s + SMOOTHING * cost_s
    if throttled:
        room.frame_credit -= cost_s
