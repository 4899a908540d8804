// SPDX-License-Identifier: MIT
// The ERC-20 and ERC-721 factories the JS kit's EVM tools call (`deployToken`, then
// `transfer`, `safeMint`, `transferFrom` on what they deployed), deployed by the local
// network at genesis at the ids the kit uses for a local node (0.0.1012, 0.0.1013). hak's own
// contracts over OpenZeppelin Contracts 5.7 (MIT), with the kit's ABI.
pragma solidity 0.8.37;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// A fungible token whose whole initial supply (given in display units) goes to its creator.
contract HakERC20 is ERC20 {
    uint8 private immutable _decimals;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 initialSupply_, address holder)
        ERC20(name_, symbol_)
    {
        _decimals = decimals_;
        _mint(holder, initialSupply_ * 10 ** uint256(decimals_));
    }

    function decimals() public view override returns (uint8) {
        return _decimals;
    }
}

contract ERC20Factory {
    event TokenDeployed(address indexed tokenAddress, address indexed creator);

    function deployToken(string memory name_, string memory symbol_, uint8 decimals_, uint256 initialSupply_)
        external
        returns (address)
    {
        HakERC20 token = new HakERC20(name_, symbol_, decimals_, initialSupply_, msg.sender);
        emit TokenDeployed(address(token), msg.sender);
        return address(token);
    }
}

/// An NFT collection its creator mints into, serials from 0.
contract HakERC721 is ERC721 {
    address public immutable owner;
    string private _base;
    uint256 private _next;

    error NotOwner(address caller);

    constructor(string memory name_, string memory symbol_, string memory baseURI_, address owner_)
        ERC721(name_, symbol_)
    {
        owner = owner_;
        _base = baseURI_;
    }

    function safeMint(address to) external returns (bool) {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _safeMint(to, _next++);
        return true;
    }

    function _baseURI() internal view override returns (string memory) {
        return _base;
    }
}

contract ERC721Factory {
    event TokenDeployed(address indexed tokenAddress, address indexed creator);

    function deployToken(string memory name_, string memory symbol_, string memory baseURI_)
        external
        returns (address)
    {
        HakERC721 token = new HakERC721(name_, symbol_, baseURI_, msg.sender);
        emit TokenDeployed(address(token), msg.sender);
        return address(token);
    }
}
