"""redis-guard's commands as typed methods of redis-py and valkey-glide
clients, routed straight to the key's node in a cluster.

>>> import redis
>>> from redis_guard import Guard
>>> g = Guard(redis.Redis())
>>> g.incrcheck("{cust:42}:orders", 1, 3600, [5, 20])
Check(current=1, level=0)
"""

from .errors import CampaignExists, GuardError, NoSuchCampaign, WrongType
from .guard import AsyncGuard, AsyncPipeline, Backend, Guard, Pipeline
from .lease import LeaseRefused
from .results import ALREADY_WON, SOLD_OUT, CampaignInfo, Cart, Check, Claim, Confirm, Reservation, Throttle, ThrottleAll

__version__ = "0.5.1"

__all__ = [
    "ALREADY_WON",
    "SOLD_OUT",
    "AsyncGuard",
    "AsyncPipeline",
    "Backend",
    "CampaignExists",
    "CampaignInfo",
    "Cart",
    "Check",
    "Claim",
    "Confirm",
    "Guard",
    "GuardError",
    "LeaseRefused",
    "NoSuchCampaign",
    "Pipeline",
    "Reservation",
    "Throttle",
    "ThrottleAll",
    "WrongType",
]
