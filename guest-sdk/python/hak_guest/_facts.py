"""What the host states a call does (contract 0.2.0 ``facts``), as plain Python objects."""

from dataclasses import dataclass, field
from typing import List, Optional

#: ``Movement.amount`` meaning "all of it" (a deleted account's whole balance, an allowance for
#: every serial).
ALL = 2**64 - 1


@dataclass(frozen=True)
class Asset:
    """``kind`` is ``"hbar"``, ``"token"`` or ``"nft"``; ``token_id`` for the last two."""

    kind: str
    token_id: Optional[str] = None


@dataclass(frozen=True)
class Movement:
    """One recipient's share: tinybars, token base units or a number of NFTs. ``via`` is
    ``"transfer"`` or ``"allowance"``; ``to`` is ``None`` for an account that does not exist yet."""

    asset: Asset
    to: Optional[str]
    amount: int
    via: str


@dataclass(frozen=True)
class Entity:
    kind: str
    id: str


@dataclass(frozen=True)
class Facts:
    movements: List[Movement] = field(default_factory=list)
    source: Optional[str] = None
    tokens: List[str] = field(default_factory=list)
    changes: List[Entity] = field(default_factory=list)
    memo: Optional[str] = None
    scheduled: bool = False


#: The facts of a call the host states none for (pre-tool-execution, or a plugin that does not
#: read them): every list empty.
NONE = Facts()
