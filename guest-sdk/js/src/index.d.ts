// Types of the hak JavaScript guest SDK (contract hedera:agent-kit@0.2.2).

import type { ToolMethod, StageParamsOf } from './tools.js';
/** Every tool's stage JSON types, generated from the tools' schemas (`hak tools --shapes ts`). */
export type * as tools from './tools.js';

export type StageName =
  | 'pre-tool-execution'
  | 'post-params-normalization'
  | 'post-core-action'
  | 'post-secondary-action';
export declare const Stage: {
  readonly PRE_TOOL_EXECUTION: 'pre-tool-execution';
  readonly POST_PARAMS_NORMALIZATION: 'post-params-normalization';
  readonly POST_CORE_ACTION: 'post-core-action';
  readonly POST_SECONDARY_ACTION: 'post-secondary-action';
};
export type ToolType = 'query' | 'transaction' | 'other';
export type AgentMode = 'autonomous' | 'returnBytes' | 'customExecuteTx' | 'customReturnBytes';

/** `params.context`. */
export interface Context {
  accountId: string | null;
  mode: AgentMode;
  network: 'local' | 'testnet' | 'mainnet' | 'previewnet' | 'custom';
}
/** An entity id, "0.0.x". */
export type EntityId = string;
/** A signed 64-bit amount as a decimal string (tinybars, token base units). */
export type Amount = string;
/** Normalised params of the value-moving tools (see wit/README.md for every tool). */
export interface NormalisedParams {
  hbarTransfers?: { accountId: EntityId; amount: Amount }[];
  tokenTransfers?: { accountId: EntityId; amount: Amount }[];
  tokenId?: EntityId;
  transactionMemo?: string;
  schedulingParams?: { isScheduled: boolean; adminKey?: string; payerAccountID?: EntityId; expirationTime?: string; waitForExpiry?: boolean };
  [key: string]: unknown;
}
export interface ToolResult {
  raw: { status: 'SUCCESS' | 'ERROR'; transactionId?: string; error?: string; errorCode?: string; [key: string]: unknown };
  humanMessage: string;
}
/** The stage's params object; each key is present from the stage that produces it. */
export interface StageParams {
  context: Context;
  rawParams: Record<string, unknown>;
  normalisedParams?: NormalisedParams;
  coreActionResult?: Record<string, unknown>;
  toolResult?: ToolResult;
}
export declare class StageInput {
  readonly stage: StageName;
  readonly method: string;
  readonly toolType: ToolType;
  /** The params JSON as the host sent it. */
  readonly paramsJson: string;
  /** Parsed once, on first use. */
  readonly params: StageParams;
  readonly context: Context;
  readonly rawParams: Record<string, unknown>;
  readonly normalisedParams: NormalisedParams | undefined;
  readonly coreActionResult: Record<string, unknown> | undefined;
  readonly toolResult: ToolResult | undefined;
  readonly isQuery: boolean;
  /**
   * The params object typed for one tool (see `tools`), or undefined when this call is of
   * another tool: `input.paramsFor('transfer_hbar_tool')?.normalisedParams?.hbarTransfers`.
   */
  paramsFor<M extends ToolMethod>(method: M): StageParamsOf<M> | undefined;
  /** What the call does, as the host states it (contract 0.2.0); undefined at pre-tool-execution. */
  readonly facts: Facts | undefined;
  /** `facts.movements`, or [] before normalisation. */
  readonly movements: readonly Movement[];
  /** `facts.tokens`, or []. */
  readonly tokens: readonly EntityId[];
}

export type Verdict =
  | { tag: 'allow' }
  | { tag: 'block'; val: { message: string; code?: string; detailsJson?: string } }
  | { tag: 'needs-approval'; val: { message: string; code?: string; detailsJson?: string; timeoutSeconds: number } };
export type HookResult = { tag: 'proceed' } | { tag: 'replace'; val: string };
export declare const allow: Verdict;
export declare const proceed: HookResult;
export declare function block(message: string, options?: { code?: string; details?: unknown }): Verdict;
/** Park the call until a human approves or denies it (contract 0.2.0); a timeout denies. */
export declare function needsApproval(message: string, options?: { code?: string; details?: unknown; timeoutSeconds?: number }): Verdict;
export declare function replace(value: unknown): HookResult;

export declare const host: {
  log(level: 'trace' | 'debug' | 'info' | 'warn' | 'error', message: string): void;
  info(message: string): void;
  warn(message: string): void;
  stateGet(key: string): string | undefined;
  /** Throws the host's message when the scratchpad is full. */
  stateSet(key: string, value: string): void;
  stateDelete(key: string): void;
  nowUnixMs(): number;
  /** Capability `hedera:submit-topic-message`; throws the host's message on error. */
  submitTopicMessage(topicId: EntityId, message: string): string;
  /** Capability `hedera:create-topic`; throws the host's message on error. */
  createTopic(memo: string): EntityId;
  /**
   * Reserve `amount` under `key` against `limit` within `windowSeconds`, atomically (0.1.2
   * `budget`); settled by the host from the call's outcome. On `unavailable` a policy must block.
   */
  reserve(key: string, amount: bigint | number, limit: bigint | number, windowSeconds: number):
    | { ok: true; total: bigint }
    | { ok: false; overLimit: bigint }
    | { ok: false; unavailable: string };
  /** What is spent or reserved under `key` in the window; throws if the store cannot answer. */
  spent(key: string, windowSeconds: number): bigint;
  /**
   * Capability `rates` (contract 0.2.2): the network's HBAR exchange rate in force; throws the
   * host's message when there is none (a policy counting in dollars must then block).
   */
  exchangeRate(): { hbarEquivalent: number; centEquivalent: number; expirationSeconds: bigint };
};

/** Why a call ended badly (`events.on-tool-failure`). */
export interface ToolFailure {
  method: string;
  toolType: ToolType;
  context: Context;
  rawParams: unknown;
  normalisedParams?: NormalisedParams;
  outcome: 'blocked' | 'failed';
  error: string;
  errorCode?: string;
  policyBlock?: Record<string, unknown>;
  pluginFailure?: Record<string, unknown>;
}

export interface Description<S> {
  name: string;
  description?: string;
  /** Tool methods, or "*" for all. */
  relevantTools: readonly string[];
  hookStages?: readonly StageName[];
  policyStages?: readonly StageName[];
  /** Handed to every stage function as its second argument. */
  state?: S;
  /**
   * What the plugin reads of the stage input, per tool method or "*" (every other tool), e.g.
   * `{'*': ['params']}` (contract 0.2.1 `inputs`). The host lowers only those parts into the
   * plugin; the others arrive as `paramsJson === ''` and no facts. Absent: everything.
   */
  reads?: Readonly<Record<string, readonly ('params' | 'facts')[]>>;
}
type Stages<R, S> = Partial<Record<'preToolExecution' | 'postParamsNormalization' | 'postCoreAction', (input: StageInput, state: S) => R | undefined>>;
export interface PluginDefinition<S> {
  /** Validate the operator's config; throw (a string) to refuse it. */
  describe(config: Record<string, unknown>): Description<S>;
  hooks?: Stages<HookResult, S> & { postToolExecution?: (input: StageInput, state: S) => HookResult | undefined };
  policy?: Stages<Verdict, S> & { postSecondaryAction?: (input: StageInput, state: S) => Verdict | undefined };
  onToolFailure?: (failure: ToolFailure, state: S) => void;
}
/** The component's exports; `export default definePlugin({...})`. */
export declare function definePlugin<S = undefined>(definition: PluginDefinition<S>): unknown;

export interface Movement {
  asset: { kind: 'hbar' } | { kind: 'token' | 'nft'; id: EntityId };
  /** undefined for a new account. */
  to: EntityId | undefined;
  amount: bigint;
  via: 'transfer' | 'allowance';
}
/** The host's facts of a call (contract 0.2.0 `facts`). */
export interface Facts {
  readonly movements: readonly Movement[];
  /** The sending or owning account, when the tool names one. */
  readonly source: EntityId | undefined;
  readonly tokens: readonly EntityId[];
  readonly changes: readonly { kind: 'account' | 'token' | 'topic'; id: EntityId }[];
  readonly memo: string | undefined;
  readonly scheduled: boolean;
}
export declare const facts: {
  /** u64 max: "all of it". */
  readonly ALL: bigint;
  readonly VALUE_TOOLS: readonly string[];
  isEntityId(s: unknown): boolean;
};
