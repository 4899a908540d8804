//! Custom fees on the emulator, driven by the real Rust SDK: token fee schedules (fixed,
//! fractional, royalty) checked at create and replaced by the fee schedule key, charged on
//! transfers and airdrops as the network charges them (who pays, exemptions, one nested
//! level), and HIP-991 topic fees with limits and exempt keys; the records' and the mirror's
//! assessed fees.

use crate::common::{key_of, mirror, start};
use hak_emu::Emulator;
use hedera::{
    AccountCreateTransaction, AccountId, AnyCustomFee, Client, CustomFee, CustomFixedFee,
    FeeAssessmentMethod, FixedFeeData, FractionalFeeData, Hbar, NftId, PrivateKey, RoyaltyFeeData,
    Status, TokenAirdropTransaction, TokenAssociateTransaction, TokenCreateTransaction,
    TokenFeeScheduleUpdateTransaction, TokenId, TokenInfoQuery, TokenMintTransaction, TokenType,
    TopicCreateTransaction, TopicId, TopicInfoQuery, TopicMessageSubmitTransaction,
    TopicUpdateTransaction, TransactionRecord, TransferTransaction,
};

/// Execute and fetch the record; a precheck or receipt failure becomes `Err(status)`.
macro_rules! record {
    ($tx:expr, $client:expr $(,)?) => {{
        let client: &Client = $client;
        match $tx.execute(client).await {
            Err(hedera::Error::TransactionPreCheckStatus { status, .. }) => {
                Err::<TransactionRecord, Status>(status)
            }
            Err(e) => panic!("{e:?}"),
            Ok(response) => match response.get_receipt(client).await {
                Err(hedera::Error::ReceiptStatus { status, .. }) => Err(status),
                Err(e) => panic!("{e:?}"),
                Ok(_) => Ok(response.get_record(client).await.unwrap()),
            },
        }
    }};
}

fn id(n: u64) -> AccountId {
    AccountId::new(0, 0, n)
}

/// A client whose operator (payer and signer) is genesis account `n`.
fn client_of(emu: &Emulator, n: u64) -> Client {
    let client = Client::for_network(std::collections::HashMap::from([(
        emu.grpc_addr.to_string(),
        id(3),
    )]))
    .unwrap();
    client.set_operator(id(n), key_of(n));
    client
}

fn hbar_fee(tinybars: i64, collector: u64) -> AnyCustomFee {
    CustomFee {
        fee: FixedFeeData {
            amount: tinybars,
            denominating_token_id: None,
        }
        .into(),
        fee_collector_account_id: Some(id(collector)),
        all_collectors_are_exempt: false,
    }
}

fn token_fee(amount: i64, token: TokenId, collector: u64) -> AnyCustomFee {
    CustomFee {
        fee: FixedFeeData {
            amount,
            denominating_token_id: Some(token),
        }
        .into(),
        fee_collector_account_id: Some(id(collector)),
        all_collectors_are_exempt: false,
    }
}

fn fractional(
    numerator: u64,
    denominator: u64,
    bounds: (i64, i64),
    method: FeeAssessmentMethod,
    collector: u64,
) -> AnyCustomFee {
    CustomFee {
        fee: FractionalFeeData {
            numerator,
            denominator,
            minimum_amount: bounds.0,
            maximum_amount: bounds.1,
            assessment_method: method,
        }
        .into(),
        fee_collector_account_id: Some(id(collector)),
        all_collectors_are_exempt: false,
    }
}

fn royalty(
    numerator: u64,
    denominator: u64,
    fallback: Option<i64>,
    collector: u64,
) -> AnyCustomFee {
    CustomFee {
        fee: RoyaltyFeeData {
            numerator,
            denominator,
            fallback_fee: fallback.map(|amount| FixedFeeData {
                amount,
                denominating_token_id: None,
            }),
        }
        .into(),
        fee_collector_account_id: Some(id(collector)),
        all_collectors_are_exempt: false,
    }
}

/// A fungible token of 0.0.1001 (10 000 units, no decimals) with these fees.
fn fungible_with(fees: Vec<AnyCustomFee>) -> TokenCreateTransaction {
    let mut tx = TokenCreateTransaction::new();
    tx.name("Fee Token")
        .symbol("FEE")
        .initial_supply(10_000)
        .treasury_account_id(id(1001))
        .custom_fees(fees);
    tx
}

async fn create(tx: &mut TokenCreateTransaction, client: &Client) -> Result<TokenId, Status> {
    run!(tx, client).map(|receipt| receipt.token_id.unwrap())
}

fn hbar_of(emu: &Emulator, n: u64) -> i64 {
    emu.node.ledger().accounts[&n].balance
}

fn units_of(emu: &Emulator, n: u64, token: TokenId) -> i64 {
    emu.node
        .ledger
        .lock()
        .unwrap()
        .rel(n, token.num)
        .map_or(0, |rel| rel.balance)
}

/// Move `amount` of `token` from `from` to `to`, paid and signed by `payer`.
async fn send(
    token: TokenId,
    from: u64,
    to: u64,
    amount: i64,
    payer: &Client,
) -> Result<TransactionRecord, Status> {
    let mut tx = TransferTransaction::new();
    tx.token_transfer(token, id(from), -amount)
        .token_transfer(token, id(to), amount);
    record!(tx, payer)
}

async fn associate(account: u64, tokens: Vec<TokenId>, client: &Client) {
    let mut tx = TokenAssociateTransaction::new();
    tx.account_id(id(account))
        .token_ids(tokens)
        .freeze_with(client)
        .unwrap()
        .sign(key_of(account));
    run!(tx, client).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fee_schedules_are_checked_at_create_and_replaced_only_with_the_fee_schedule_key() {
    let (emu, client) = start().await;
    let eleven = (0..11).map(|_| hbar_fee(1, 1004)).collect();
    let refused = [
        (fungible_with(eleven), Status::CustomFeesListTooLong),
        (
            fungible_with(vec![hbar_fee(0, 1004)]),
            Status::CustomFeeMustBePositive,
        ),
        (
            fungible_with(vec![hbar_fee(1, 999_999)]),
            Status::InvalidCustomFeeCollector,
        ),
        (
            fungible_with(vec![fractional(
                1,
                0,
                (0, 0),
                FeeAssessmentMethod::Inclusive,
                1004,
            )]),
            Status::FractionDividesByZero,
        ),
        (
            fungible_with(vec![fractional(
                1,
                10,
                (5, 2),
                FeeAssessmentMethod::Inclusive,
                1004,
            )]),
            Status::FractionalFeeMaxAmountLessThanMinAmount,
        ),
        (
            fungible_with(vec![royalty(1, 10, None, 1004)]),
            Status::CustomRoyaltyFeeOnlyAllowedForNonFungibleUnique,
        ),
        (
            fungible_with(vec![token_fee(1, TokenId::new(0, 0, 424_242), 1004)]),
            Status::InvalidTokenIdInCustomFees,
        ),
    ];
    for (mut tx, status) in refused {
        assert_eq!(create(&mut tx, &client).await.unwrap_err(), status);
    }
    let mut nft = TokenCreateTransaction::new();
    nft.name("Art")
        .symbol("ART")
        .token_type(TokenType::NonFungibleUnique)
        .treasury_account_id(id(1001))
        .supply_key(client.get_operator_public_key().unwrap())
        .custom_fees([fractional(
            1,
            10,
            (0, 0),
            FeeAssessmentMethod::Inclusive,
            1004,
        )]);
    assert_eq!(
        create(&mut nft, &client).await.unwrap_err(),
        Status::CustomFractionalFeeOnlyAllowedForFungibleCommon
    );
    let mut nft = TokenCreateTransaction::new();
    nft.name("Art")
        .symbol("ART")
        .token_type(TokenType::NonFungibleUnique)
        .treasury_account_id(id(1001))
        .supply_key(client.get_operator_public_key().unwrap())
        .custom_fees([royalty(11, 10, None, 1004)]);
    assert_eq!(
        create(&mut nft, &client).await.unwrap_err(),
        Status::RoyaltyFractionCannotExceedOne
    );

    // A fixed fee in another token needs its collector associated with that token.
    let plain = create(&mut fungible_with(vec![]), &client).await.unwrap();
    let mut by_unassociated = fungible_with(vec![token_fee(1, plain, 1004)]);
    assert_eq!(
        create(&mut by_unassociated, &client).await.unwrap_err(),
        Status::TokenNotAssociatedToFeeCollector
    );
    // A fixed fee in the sentinel 0.0.0 is a fee in the token being created.
    let mut own = fungible_with(vec![token_fee(3, TokenId::new(0, 0, 0), 1004)]);
    own.fee_schedule_key(key_of(1002).public_key());
    let token = create(&mut own, &client).await.unwrap();
    let info = TokenInfoQuery::new()
        .token_id(token)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.custom_fees, vec![token_fee(3, token, 1004)]);
    assert_eq!(
        units_of(&emu, 1004, token),
        0,
        "the collector of a fee in the new token is associated with it"
    );
    assert!(emu
        .node
        .ledger
        .lock()
        .unwrap()
        .rel(1004, token.num)
        .is_some());

    // Only the fee schedule key replaces the schedule.
    let mut update = TokenFeeScheduleUpdateTransaction::new();
    update.token_id(token).custom_fees([hbar_fee(7, 1004)]);
    assert_eq!(run!(update, &client).unwrap_err(), Status::InvalidSignature);
    let mut update = TokenFeeScheduleUpdateTransaction::new();
    update
        .token_id(token)
        .custom_fees([hbar_fee(7, 1004)])
        .freeze_with(&client)
        .unwrap()
        .sign(key_of(1002));
    run!(update, &client).unwrap();
    let info = TokenInfoQuery::new()
        .token_id(token)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.custom_fees, vec![hbar_fee(7, 1004)]);
    let (_, json) = mirror(&emu, &format!("/tokens/{token}")).await;
    let fixed = &json["custom_fees"]["fixed_fees"][0];
    assert_eq!(
        (
            fixed["amount"].as_i64(),
            fixed["collector_account_id"].as_str()
        ),
        (Some(7), Some("0.0.1004")),
        "{json}"
    );
    assert!(fixed["denominating_token_id"].is_null());

    // A token without a fee schedule key keeps its schedule.
    let mut update = TokenFeeScheduleUpdateTransaction::new();
    update.token_id(plain).custom_fees([hbar_fee(7, 1004)]);
    assert_eq!(
        run!(update, &client).unwrap_err(),
        Status::TokenHasNoFeeScheduleKey
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixed_and_fractional_fees_are_paid_by_senders_and_receivers_as_the_network_charges_them() {
    let (emu, client) = start().await;
    // 1 ℏ per transfer from each sender, and a tenth of what is received (1 to 100 units).
    let token = create(
        &mut fungible_with(vec![
            hbar_fee(100_000_000, 1004),
            fractional(1, 10, (1, 100), FeeAssessmentMethod::Inclusive, 1004),
        ]),
        &client,
    )
    .await
    .unwrap();
    // The treasury pays no fees of its own token.
    let from_treasury = send(token, 1001, 1002, 1_000, &client).await.unwrap();
    assert!(from_treasury.assessed_custom_fees.is_empty());
    assert_eq!(units_of(&emu, 1002, token), 1_000);

    let by_1002 = client_of(&emu, 1002);
    let collector_before = hbar_of(&emu, 1004);
    let sent = send(token, 1002, 1003, 100, &by_1002).await.unwrap();
    assert_eq!(
        units_of(&emu, 1003, token),
        90,
        "the receiver pays the fraction"
    );
    assert_eq!(units_of(&emu, 1002, token), 900);
    assert_eq!(units_of(&emu, 1004, token), 10);
    assert_eq!(hbar_of(&emu, 1004) - collector_before, 100_000_000);
    let mut assessed: Vec<_> = sent
        .assessed_custom_fees
        .iter()
        .map(|fee| {
            (
                fee.amount,
                fee.token_id,
                fee.fee_collector_account_id,
                fee.payer_account_id_list.clone(),
            )
        })
        .collect();
    assessed.sort_by_key(|fee| fee.1.is_some());
    assert_eq!(
        assessed,
        vec![
            (100_000_000, None, Some(id(1004)), vec![id(1002)]),
            (10, Some(token), Some(id(1004)), vec![id(1003)]),
        ]
    );
    assert_eq!(
        sent.token_transfers[&token][&id(1003)],
        90,
        "the record's transfers include the fees"
    );
    let (_, tx) = mirror(
        &emu,
        &format!(
            "/transactions/0.0.1002-{}-{:09}",
            sent.transaction_id.valid_start.unix_timestamp(),
            sent.transaction_id.valid_start.nanosecond()
        ),
    )
    .await;
    let fees = tx["transactions"][0]["assessed_custom_fees"]
        .as_array()
        .unwrap_or_else(|| panic!("{tx}"));
    assert_eq!(fees.len(), 2);
    assert!(fees.iter().any(|fee| fee["amount"] == 10
        && fee["token_id"] == token.to_string()
        && fee["effective_payer_account_ids"][0] == "0.0.1003"));

    // The collector pays no fee of its own.
    let by_1004 = client_of(&emu, 1004);
    let own = send(token, 1004, 1003, 5, &by_1004).await.unwrap();
    assert!(own.assessed_custom_fees.is_empty());

    // Net of transfers: the receiver gets it all, the sender pays the fraction on top.
    let net = create(
        &mut fungible_with(vec![fractional(
            1,
            10,
            (0, 0),
            FeeAssessmentMethod::Exclusive,
            1004,
        )]),
        &client,
    )
    .await
    .unwrap();
    send(net, 1001, 1002, 100, &client).await.unwrap();
    send(net, 1002, 1003, 50, &by_1002).await.unwrap();
    assert_eq!(
        (units_of(&emu, 1003, net), units_of(&emu, 1002, net)),
        (50, 45)
    );
    assert_eq!(
        send(net, 1002, 1003, 45, &by_1002).await.unwrap_err(),
        Status::InsufficientSenderAccountBalanceForCustomFee
    );
    assert_eq!(units_of(&emu, 1002, net), 45, "nothing moved");

    // A payer who cannot afford a fixed HBAR fee.
    let poor_key = PrivateKey::generate_ed25519();
    let poor = run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(poor_key.public_key())
            .initial_balance(Hbar::from_tinybars(50_000_000))
            .max_automatic_token_associations(-1),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    send(token, 1001, poor.num, 10, &client).await.unwrap();
    let mut from_poor = TransferTransaction::new();
    from_poor
        .token_transfer(token, poor, -10)
        .token_transfer(token, id(1002), 10)
        .freeze_with(&client)
        .unwrap()
        .sign(poor_key);
    assert_eq!(
        run!(from_poor, &client).unwrap_err(),
        Status::InsufficientPayerBalanceForCustomFee
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn royalties_take_a_share_of_the_value_exchanged_or_the_fallback_from_the_receiver() {
    let (emu, client) = start().await;
    let mut art = TokenCreateTransaction::new();
    art.name("Art")
        .symbol("ART")
        .token_type(TokenType::NonFungibleUnique)
        .treasury_account_id(id(1001))
        .supply_key(client.get_operator_public_key().unwrap())
        // A tenth of the value, or 5 ℏ from the receiver when none is exchanged.
        .custom_fees([royalty(1, 10, Some(500_000_000), 1004)]);
    let art = create(&mut art, &client).await.unwrap();
    run!(
        TokenMintTransaction::new()
            .token_id(art)
            .metadata([b"a".to_vec(), b"b".to_vec()]),
        &client
    )
    .unwrap();
    let nft = |serial| NftId::from((art, serial));
    let mut gift = TransferTransaction::new();
    gift.nft_transfer(nft(1), id(1001), id(1002));
    let from_treasury = record!(gift, &client).unwrap();
    assert!(from_treasury.assessed_custom_fees.is_empty());

    // 0.0.1002 sells serial 1 to 0.0.1003 for 10 ℏ: a tenth of the 10 ℏ goes to the collector.
    let collector = hbar_of(&emu, 1004);
    let seller = hbar_of(&emu, 1002);
    let mut sale = TransferTransaction::new();
    sale.nft_transfer(nft(1), id(1002), id(1003))
        .hbar_transfer(id(1003), Hbar::new(-10))
        .hbar_transfer(id(1002), Hbar::new(10))
        .freeze_with(&client)
        .unwrap()
        .sign(key_of(1002))
        .sign(key_of(1003));
    let sold = record!(sale, &client).unwrap();
    assert_eq!(hbar_of(&emu, 1004) - collector, 100_000_000);
    assert_eq!(hbar_of(&emu, 1002) - seller, 900_000_000);
    assert_eq!(sold.assessed_custom_fees.len(), 1);
    assert_eq!(
        sold.assessed_custom_fees[0].payer_account_id_list,
        vec![id(1002)]
    );

    // Given away for nothing: the fallback is charged to the receiver, who must sign.
    let mut free = TransferTransaction::new();
    free.nft_transfer(nft(1), id(1003), id(1005))
        .freeze_with(&client)
        .unwrap()
        .sign(key_of(1003));
    assert_eq!(run!(free, &client).unwrap_err(), Status::InvalidSignature);
    let collector = hbar_of(&emu, 1004);
    let receiver = hbar_of(&emu, 1005);
    let mut free = TransferTransaction::new();
    free.nft_transfer(nft(1), id(1003), id(1005))
        .freeze_with(&client)
        .unwrap()
        .sign(key_of(1003))
        .sign(key_of(1005));
    let given = record!(free, &client).unwrap();
    assert_eq!(hbar_of(&emu, 1004) - collector, 500_000_000);
    assert_eq!(receiver - hbar_of(&emu, 1005), 500_000_000);
    assert_eq!(
        given.assessed_custom_fees[0].payer_account_id_list,
        vec![id(1005)]
    );

    // An airdrop cannot charge a receiver: a fallback royalty refuses it.
    let mut drop = TokenAirdropTransaction::new();
    drop.nft_transfer(nft(1), id(1005), id(1002))
        .freeze_with(&client)
        .unwrap()
        .sign(key_of(1005));
    assert_eq!(
        run!(drop, &client).unwrap_err(),
        Status::TokenAirdropWithFallbackRoyalty
    );
    let (_, json) = mirror(&emu, &format!("/tokens/{art}")).await;
    let fee = &json["custom_fees"]["royalty_fees"][0];
    assert_eq!(fee["amount"]["numerator"], 1, "{json}");
    assert_eq!(fee["amount"]["denominator"], 10);
    assert_eq!(fee["fallback_fee"]["amount"], 500_000_000);
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fee_paid_in_a_token_with_fees_pays_those_one_level_deep_and_no_deeper() {
    let (emu, client) = start().await;
    // base: 1 ℏ per transfer. middle: 2 base per transfer. top: 3 middle per transfer.
    let base = create(
        &mut fungible_with(vec![hbar_fee(100_000_000, 1004)]),
        &client,
    )
    .await
    .unwrap();
    associate(1004, vec![base], &client).await;
    let middle = create(&mut fungible_with(vec![token_fee(2, base, 1004)]), &client)
        .await
        .unwrap();
    associate(1004, vec![middle], &client).await;
    let top = create(
        &mut fungible_with(vec![token_fee(3, middle, 1004)]),
        &client,
    )
    .await
    .unwrap();
    for token in [base, middle, top] {
        send(token, 1001, 1002, 100, &client).await.unwrap();
    }
    let by_1002 = client_of(&emu, 1002);
    let collector = hbar_of(&emu, 1004);
    let sent = send(middle, 1002, 1003, 10, &by_1002).await.unwrap();
    assert_eq!(
        sent.assessed_custom_fees.len(),
        2,
        "2 base, then 1 ℏ for moving base"
    );
    assert_eq!(units_of(&emu, 1004, base), 2);
    assert_eq!(units_of(&emu, 1002, base), 98);
    assert_eq!(hbar_of(&emu, 1004) - collector, 100_000_000);

    assert_eq!(
        send(top, 1002, 1003, 10, &by_1002).await.unwrap_err(),
        Status::CustomFeeChargingExceededMaxRecursionDepth
    );
    assert_eq!(units_of(&emu, 1002, top), 100, "nothing moved");
    emu.shutdown();
}

async fn topic_with(
    fees: Vec<CustomFixedFee>,
    exempt: Vec<hedera::Key>,
    client: &Client,
) -> TopicId {
    run!(
        TopicCreateTransaction::new()
            .admin_key(client.get_operator_public_key().unwrap())
            .fee_schedule_key(client.get_operator_public_key().unwrap())
            .fee_exempt_keys(exempt)
            .custom_fees(fees),
        client
    )
    .unwrap()
    .topic_id
    .unwrap()
}

fn submit(topic: TopicId) -> TopicMessageSubmitTransaction {
    let mut tx = TopicMessageSubmitTransaction::new();
    tx.topic_id(topic).message("hello");
    tx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_fees_are_charged_per_message_within_the_payers_limits_except_to_exempt_keys() {
    let (emu, client) = start().await;
    let one_hbar = CustomFixedFee::new(100_000_000, None, Some(id(1004)));
    let topic = topic_with(
        vec![one_hbar.clone()],
        vec![key_of(1003).public_key().into()],
        &client,
    )
    .await;
    let info = TopicInfoQuery::new()
        .topic_id(topic)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(info.custom_fees, vec![one_hbar.clone()]);
    assert_eq!(
        info.fee_exempt_keys,
        vec![hedera::Key::from(key_of(1003).public_key())]
    );

    // A collector that requires receiver signatures still collects: fee credits need none.
    run!(
        hedera::AccountUpdateTransaction::new()
            .account_id(id(1004))
            .receiver_signature_required(true)
            .freeze_with(&client)
            .unwrap()
            .sign(key_of(1004)),
        &client
    )
    .unwrap();
    let by_1002 = client_of(&emu, 1002);
    let collector = hbar_of(&emu, 1004);
    let paid = record!(submit(topic), &by_1002).unwrap();
    assert_eq!(hbar_of(&emu, 1004) - collector, 100_000_000);
    assert_eq!(paid.assessed_custom_fees.len(), 1);
    assert_eq!(
        paid.assessed_custom_fees[0].payer_account_id_list,
        vec![id(1002)]
    );

    // The limits a payer sets (`max_custom_fees`) are checked through the JS SDK
    // (`js_sdk.rs`, topic-fees.mjs): the Rust SDK 0.43 leaves them out of what it sends.
    // A payer holding a fee-exempt key pays nothing.
    let collector = hbar_of(&emu, 1004);
    let exempt = record!(submit(topic), &client_of(&emu, 1003)).unwrap();
    assert!(exempt.assessed_custom_fees.is_empty());
    assert_eq!(hbar_of(&emu, 1004), collector);

    // The fee schedule key replaces the fees; a topic created without one cannot get one.
    run!(
        TopicUpdateTransaction::new()
            .topic_id(topic)
            .custom_fees(vec![CustomFixedFee::new(7, None, Some(id(1005)))]),
        &client
    )
    .unwrap();
    let (_, json) = mirror(&emu, &format!("/topics/{topic}")).await;
    assert_eq!(json["custom_fees"]["fixed_fees"][0]["amount"], 7, "{json}");
    assert_eq!(
        json["custom_fees"]["fixed_fees"][0]["collector_account_id"],
        "0.0.1005"
    );
    assert_eq!(
        json["fee_exempt_key_list"].as_array().map(Vec::len),
        Some(1)
    );
    let keyless = run!(
        TopicCreateTransaction::new().admin_key(client.get_operator_public_key().unwrap()),
        &client
    )
    .unwrap()
    .topic_id
    .unwrap();
    assert_eq!(
        run!(
            TopicUpdateTransaction::new()
                .topic_id(keyless)
                .custom_fees(vec![one_hbar.clone()]),
            &client
        )
        .unwrap_err(),
        Status::FeeScheduleKeyNotSet
    );
    assert_eq!(
        run!(
            TopicUpdateTransaction::new()
                .topic_id(keyless)
                .fee_schedule_key(client.get_operator_public_key().unwrap()),
            &client
        )
        .unwrap_err(),
        Status::FeeScheduleKeyCannotBeUpdated
    );
    emu.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn airdrops_pay_the_fees_of_delivered_and_pending_transfers_up_front() {
    let (emu, client) = start().await;
    let token = create(
        &mut fungible_with(vec![hbar_fee(100_000_000, 1004)]),
        &client,
    )
    .await
    .unwrap();
    send(token, 1001, 1002, 100, &client).await.unwrap();
    let closed = run!(
        AccountCreateTransaction::new()
            .set_key_without_alias(PrivateKey::generate_ed25519().public_key())
            .max_automatic_token_associations(0),
        &client
    )
    .unwrap()
    .account_id
    .unwrap();
    let by_1002 = client_of(&emu, 1002);
    let collector = hbar_of(&emu, 1004);
    let mut drop = TokenAirdropTransaction::new();
    drop.token_transfer(token, id(1002), -30)
        .token_transfer(token, id(1003), 10)
        .token_transfer(token, closed, 20);
    let dropped = record!(drop, &by_1002).unwrap();
    assert_eq!(units_of(&emu, 1003, token), 10);
    assert_eq!(dropped.pending_airdrop_records.len(), 1);
    assert_eq!(
        hbar_of(&emu, 1004) - collector,
        100_000_000,
        "one sender, one fixed fee"
    );
    assert_eq!(
        dropped.assessed_custom_fees[0].payer_account_id_list,
        vec![id(1002)]
    );

    // An airdrop to a key alias creates the account and delivers to it.
    let alias_key = PrivateKey::generate_ed25519();
    let alias = alias_key.public_key().to_account_id(0, 0);
    let mut to_alias = TokenAirdropTransaction::new();
    to_alias
        .token_transfer(token, id(1002), -5)
        .token_transfer(token, alias, 5);
    record!(to_alias, &by_1002).unwrap();
    let created = hedera::AccountInfoQuery::new()
        .account_id(alias)
        .execute(&client)
        .await
        .unwrap();
    assert_eq!(created.key, hedera::Key::from(alias_key.public_key()));
    assert_eq!(units_of(&emu, created.account_id.num, token), 5);
    emu.shutdown();
}
