// The address-book service through the official JS SDK: registered nodes and consensus
// nodes created, updated, associated and deleted. Arguments: the JSON line `hak emu`
// prints, and the treasury's (0.0.2's) private key. Prints one line per step.
import {
  Client, PrivateKey, Hbar, AccountCreateTransaction, RegisteredNodeCreateTransaction,
  RegisteredNodeUpdateTransaction, RegisteredNodeDeleteTransaction, BlockNodeServiceEndpoint,
  BlockNodeApi, GeneralServiceEndpoint, NodeCreateTransaction, NodeUpdateTransaction,
  NodeDeleteTransaction, ServiceEndpoint,
} from '@hiero-ledger/sdk';

const info = JSON.parse(process.argv[2]);
const treasuryKey = PrivateKey.fromStringDer(process.argv[3]);
const client = Client.forNetwork({ [info.grpc]: info.nodeAccountId });
client.setOperator(info.operatorId, PrivateKey.fromStringDer(info.operatorKey));
const council = Client.forNetwork({ [info.grpc]: info.nodeAccountId });
council.setOperator('0.0.2', treasuryKey);

/** The receipt, or the status a precheck or the receipt failed with. */
async function run(tx, as, ...signers) {
  try {
    tx.freezeWith(as);
    for (const key of signers) await tx.sign(key);
    return await (await tx.execute(as)).getReceipt(as);
  } catch (e) {
    if (e.status === undefined) throw e;
    return { status: e.status };
  }
}

const blockNode = () => new BlockNodeServiceEndpoint().setIpAddress(Uint8Array.of(127, 0, 0, 1))
  .setPort(443).setRequiresTls(true).setEndpointApis([BlockNodeApi.SubscribeStream, BlockNodeApi.Status]);
const general = () => new GeneralServiceEndpoint().setDomainName('status.example.com').setPort(8443)
  .setDescription('status page');

const admin = PrivateKey.generateED25519();
console.log('no admin key', (await run(new RegisteredNodeCreateTransaction().setServiceEndpoints([blockNode()]), client)).status.toString());
console.log('no endpoints', (await run(new RegisteredNodeCreateTransaction().setAdminKey(admin.publicKey), client, admin)).status.toString());
console.log('unsigned', (await run(new RegisteredNodeCreateTransaction().setAdminKey(admin.publicKey).setServiceEndpoints([blockNode()]), client)).status.toString());
const created = await run(new RegisteredNodeCreateTransaction().setAdminKey(admin.publicKey)
  .setDescription('block node').setServiceEndpoints([blockNode(), general()]), client, admin);
const registeredId = created.registeredNodeId;
console.log('registered', created.status.toString(), registeredId.toString());

const listed = await (await fetch(`${info.mirror}/api/v1/network/registered-nodes`)).json();
const node = listed.registered_nodes[0];
console.log('listed', listed.registered_nodes.length, node.registered_node_id, node.description, node.admin_key.key === admin.publicKey.toStringRaw());
console.log('endpoints', node.service_endpoints.map((e) => `${e.type}:${e.ip_address ?? e.domain_name}:${e.port}`).join(' '));
console.log('apis', node.service_endpoints[0].block_node.endpoint_apis.join(','), node.service_endpoints[1].general_service.description);

console.log('update', (await run(new RegisteredNodeUpdateTransaction().setRegisteredNodeId(registeredId).setDescription('renamed'), client, admin)).status.toString());
const newAdmin = PrivateKey.generateED25519();
console.log('new admin unsigned', (await run(new RegisteredNodeUpdateTransaction().setRegisteredNodeId(registeredId).setAdminKey(newAdmin.publicKey), client, admin)).status.toString());
console.log('missing', (await run(new RegisteredNodeUpdateTransaction().setRegisteredNodeId(999).setDescription('x'), client, admin)).status.toString());

// A consensus node: the council's to create.
const accountKey = PrivateKey.generateED25519();
const account = (await run(new AccountCreateTransaction().setKeyWithoutAlias(accountKey.publicKey).setInitialBalance(new Hbar(1)), client)).accountId;
const nodeAdmin = PrivateKey.generateED25519();
const endpoint = (name, port) => new ServiceEndpoint().setDomainName(name).setPort(port);
const nodeCreate = () => new NodeCreateTransaction().setAccountId(account).setAdminKey(nodeAdmin.publicKey)
  .setDescription('second').setGossipCaCertificate(Uint8Array.of(1, 2, 3))
  .setGossipEndpoints([endpoint('gossip.example.com', 50111)]).setServiceEndpoints([endpoint('grpc.example.com', 50211)])
  .setAssociatedRegisteredNodes([registeredId]);
console.log('node by operator', (await run(nodeCreate(), client, nodeAdmin)).status.toString());
const nodeCreated = await run(nodeCreate(), council, nodeAdmin);
console.log('node', nodeCreated.status.toString(), nodeCreated.nodeId.toString());
console.log('delete associated', (await run(new RegisteredNodeDeleteTransaction().setRegisteredNodeId(registeredId), client, admin)).status.toString());
const cleared = await run(new NodeUpdateTransaction().setNodeId(nodeCreated.nodeId).clearAssociatedRegisteredNodes(), client, nodeAdmin);
console.log('cleared', cleared.status.toString(), cleared.nodeId.toString());
console.log('delete registered', (await run(new RegisteredNodeDeleteTransaction().setRegisteredNodeId(registeredId), client, admin)).status.toString());
console.log('delete again', (await run(new RegisteredNodeDeleteTransaction().setRegisteredNodeId(registeredId), client, admin)).status.toString());

// Node 0 (this node) is the treasury key's: a proxy endpoint set, then removed.
console.log('proxy', (await run(new NodeUpdateTransaction().setNodeId(0).setGrpcWebProxyEndpoint(endpoint('proxy.example.com', 443)), council)).status.toString());
const unproxied = await run(new NodeUpdateTransaction().setNodeId(0).deleteGrpcWebProxyEndpoint(), council);
console.log('unproxied', unproxied.status.toString(), unproxied.nodeId.toString());
console.log('node 0 by stranger', (await run(new NodeUpdateTransaction().setNodeId(0).setDescription('mine'), client)).status.toString());
console.log('node delete', (await run(new NodeDeleteTransaction().setNodeId(nodeCreated.nodeId), council)).status.toString());
console.log('deleted node', (await run(new NodeUpdateTransaction().setNodeId(nodeCreated.nodeId).setDescription('x'), client, nodeAdmin)).status.toString());
client.close();
council.close();
