//! The gRPC face of the node: every HAPI service, every method. Transactions go to
//! `ingest` and queries to `queries` whatever RPC carried them (the SDK sends ScheduleSign
//! over `deleteSchedule`, for one): the body decides.

use crate::node::ingest::Node;
use crate::node::queries;
use hedera_proto::services as proto;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// The shared node behind every service.
#[derive(Clone)]
pub struct GrpcNode(pub Arc<Node>);

// `tonic::Status` is the error type the generated service traits require.
#[allow(clippy::result_large_err)]
impl GrpcNode {
    fn transaction(
        &self,
        request: Request<proto::Transaction>,
    ) -> Result<Response<proto::TransactionResponse>, Status> {
        if self.0.faults().take_unavailable() {
            return Err(Status::unavailable("hak-emu: injected UNAVAILABLE"));
        }
        let code = self.0.submit(request.get_ref());
        if self.0.faults().take_lost_response() {
            // Applied (or refused), but the answer never reaches the client.
            return Err(Status::unavailable("hak-emu: injected lost response"));
        }
        Ok(Response::new(proto::TransactionResponse {
            node_transaction_precheck_code: code as i32,
            cost: 0,
        }))
    }

    fn query(&self, request: Request<proto::Query>) -> Result<Response<proto::Response>, Status> {
        match queries::answer(&self.0, request.get_ref()) {
            Some(response) => Ok(Response::new(response)),
            None => Err(Status::unimplemented("hak-emu does not serve this query")),
        }
    }
}

macro_rules! service {
    ($trait:path; tx: [$($tx:ident),* $(,)?]; query: [$($q:ident),* $(,)?]) => {
        #[tonic::async_trait]
        impl $trait for GrpcNode {
            $(
                async fn $tx(&self, request: Request<proto::Transaction>) -> Result<Response<proto::TransactionResponse>, Status> {
                    self.transaction(request)
                }
            )*
            $(
                async fn $q(&self, request: Request<proto::Query>) -> Result<Response<proto::Response>, Status> {
                    self.query(request)
                }
            )*
        }
    };
}

service!(proto::crypto_service_server::CryptoService;
    tx: [create_account, update_account, crypto_transfer, crypto_delete, approve_allowances, delete_allowances, add_live_hash, delete_live_hash];
    query: [get_live_hash, get_account_records, crypto_get_balance, get_account_info, get_transaction_receipts, get_tx_record_by_tx_id]);
service!(proto::consensus_service_server::ConsensusService;
    tx: [create_topic, update_topic, delete_topic, submit_message];
    query: [get_topic_info]);
service!(proto::token_service_server::TokenService;
    tx: [create_token, update_token, mint_token, burn_token, delete_token, wipe_token_account, freeze_token_account,
         unfreeze_token_account, grant_kyc_to_token_account, revoke_kyc_from_token_account, associate_tokens,
         dissociate_tokens, update_token_fee_schedule, pause_token, unpause_token, update_nfts, reject_token,
         airdrop_tokens, cancel_airdrop, claim_airdrop];
    query: [get_token_info, get_token_nft_info]);
service!(proto::schedule_service_server::ScheduleService;
    tx: [create_schedule, sign_schedule, delete_schedule];
    query: [get_schedule_info]);
service!(proto::file_service_server::FileService;
    tx: [create_file, update_file, delete_file, append_content, system_delete, system_undelete];
    query: [get_file_content, get_file_info]);
service!(proto::smart_contract_service_server::SmartContractService;
    tx: [create_contract, update_contract, contract_call_method, delete_contract, system_delete, system_undelete, call_ethereum, hook_store];
    query: [contract_call_local_method, get_contract_info, contract_get_bytecode, get_by_solidity_id, get_tx_record_by_contract_id]);
service!(proto::network_service_server::NetworkService;
    tx: [unchecked_submit];
    query: [get_version_info, get_account_details, get_execution_time]);
service!(proto::util_service_server::UtilService;
    tx: [prng, atomic_batch];
    query: []);
service!(proto::freeze_service_server::FreezeService;
    tx: [freeze];
    query: []);
service!(proto::address_book_service_server::AddressBookService;
    tx: [create_node, delete_node, update_node, create_registered_node, update_registered_node, delete_registered_node];
    query: []);
