/*
 * GENERATED from schemas/acpspec-envelope-0.1.schema.json by scripts/envelope-types.ts
 * (json-schema-to-typescript). Do not edit: change the schema and run `npm run gen:types`.
 * src/acpspec/envelope.ts builds the snapshot/delta model from these types.
 */

/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "envelopeId".
 */
export type EnvelopeId = string;
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "id".
 */
export type Id = string;
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "timestamp".
 */
export type Timestamp = string;
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "agentId".
 */
export type AgentId = string;
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "date".
 */
export type Date = string;
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "minor".
 */
export type Minor = number;
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "currency".
 */
export type Currency = string;

/**
 * Snapshot (no parent_envelope_id; the eight objects, no patch) or delta (parent_envelope_id and an RFC 6902 patch, no objects). Fields marked x-acp-pii hold personal data; x-acp-credit marks credit data; x-acp-subject names where the data subject (a party id) is found: "$key" (the map key) or a slash path relative to the annotated object.
 */
export interface EnvelopeSchema {
  acp_version: string;
  envelope_id: EnvelopeId;
  transaction_id: Id;
  parent_envelope_id?: EnvelopeId;
  produced_at: Timestamp;
  producer: Producer;
  transaction?: Transaction;
  parties?: {
    [k: string]: Party;
  };
  consent?: {
    [k: string]: PartyConsent;
  };
  vehicles?: {
    [k: string]: Vehicle;
  };
  quote?: Quote;
  financing?: Financing;
  fulfillment?: Fulfillment;
  events?: Event[];
  /**
   * @minItems 1
   * @maxItems 1000
   */
  patch?: [PatchOperation, ...PatchOperation[]];
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "producer".
 */
export interface Producer {
  agent_id: AgentId;
  role: string;
  organization?: string;
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "transaction".
 */
export interface Transaction {
  type: 'retail_purchase' | 'lease' | 'wholesale' | 'trade_in' | 'service' | 'fleet_service' | 'fleet_purchase';
  stage: 'inquiry' | 'lead' | 'quote' | 'deal' | 'contracted' | 'fulfilled' | 'closed' | 'cancelled';
  opened_at?: Timestamp;
  dealer?: {
    dealer_id: Id;
    name?: string;
    location_id?: Id;
  };
  source?: {
    channel?: 'web' | 'phone' | 'walk_in' | 'marketplace' | 'agent' | 'fleet_portal' | 'referral';
    agent_id?: AgentId;
    campaign?: string;
  };
  external_refs?: {
    [k: string]: string;
  };
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "party".
 */
export interface Party {
  kind: 'person' | 'organization';
  /**
   * @minItems 1
   */
  roles: [
    'buyer' | 'co_buyer' | 'dealer' | 'lender' | 'fleet_operator' | 'driver' | 'service_customer' | 'insurer',
    ...('buyer' | 'co_buyer' | 'dealer' | 'lender' | 'fleet_operator' | 'driver' | 'service_customer' | 'insurer')[]
  ];
  organization_name?: string;
  name?: {
    given?: string;
    middle?: string;
    family?: string;
    suffix?: string;
    full?: string;
  };
  contact?: {
    email?: string;
    phone?: string;
    preferred_channel?: 'email' | 'phone' | 'sms' | 'mail';
  };
  address?: Address;
  date_of_birth?: string;
  driver_license?: {
    number: string;
    issuing_region: string;
    expires_on?: Date;
  };
}
export interface Address {
  line1?: string;
  line2?: string;
  city?: string;
  region?: string;
  postal_code?: string;
  country: string;
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "partyConsent".
 */
export interface PartyConsent {
  contact?: ConsentRecord;
  marketing?: ConsentRecord;
  credit?: ConsentRecord;
  data_sharing?: ConsentRecord;
  vehicle_data?: ConsentRecord;
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "consentRecord".
 */
export interface ConsentRecord {
  state: 'revoked' | 'denied' | 'unknown' | 'limited' | 'granted';
  channels?: ('email' | 'phone' | 'sms' | 'mail' | 'in_person' | 'app')[];
  granted_to?: AgentId[];
  captured_at?: Timestamp;
  expires_at?: Timestamp;
  captured_by?: AgentId;
  method?: 'web_form' | 'verbal' | 'written' | 'in_app' | 'agent_dialogue' | 'imported';
  consent_text?: string;
  evidence_hash?: string;
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "vehicle".
 */
export interface Vehicle {
  role: 'of_interest' | 'trade_in' | 'service_subject' | 'fleet_unit' | 'delivered';
  vin?: string;
  year?: number;
  make?: string;
  model?: string;
  trim?: string;
  condition?: 'new' | 'used' | 'certified_pre_owned';
  odometer?: {
    value: number;
    unit: 'km' | 'mi';
  };
  stock_number?: string;
  owner_party_id?: Id;
  registration?: {
    plate: string;
    region?: string;
  };
  lien?: {
    holder_name?: string;
    payoff?: Money;
  };
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "money".
 */
export interface Money {
  amount_minor: Minor;
  currency: Currency;
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "quote".
 */
export interface Quote {
  status: 'none' | 'draft' | 'presented' | 'accepted' | 'expired' | 'withdrawn';
  quote_id?: Id;
  valid_until?: Timestamp;
  currency?: Currency;
  lines?: {
    [k: string]: {
      kind:
        | 'vehicle_price'
        | 'fee'
        | 'tax'
        | 'add_on'
        | 'incentive'
        | 'discount'
        | 'trade_allowance'
        | 'trade_payoff'
        | 'labour'
        | 'parts';
      description?: string;
      vehicle_id?: Id;
      quantity?: number;
      amount_minor: Minor;
    };
  };
  totals?: {
    subtotal_minor?: Minor;
    fees_minor?: Minor;
    tax_minor?: Minor;
    out_the_door_minor: Minor;
  };
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "financing".
 */
export interface Financing {
  method?: 'undecided' | 'cash' | 'finance' | 'lease' | 'fleet_account';
  credit_application?: {
    status: 'not_started' | 'submitted' | 'pending' | 'approved' | 'conditionally_approved' | 'declined' | 'withdrawn';
    reference?: string;
    submitted_at?: Timestamp;
    /**
     * @minItems 1
     */
    applicant_party_ids: [Id, ...Id[]];
  };
  offers?: {
    [k: string]: {
      kind: 'finance' | 'lease';
      lender_party_id?: Id;
      apr_bps?: number;
      term_months: number;
      monthly_payment?: Money;
      down_payment?: Money;
      residual?: Money;
      annual_mileage?: number;
      expires_at?: Timestamp;
    };
  };
  decision?: {
    status: 'pending' | 'approved' | 'conditionally_approved' | 'declined' | 'counter_offer';
    offer_id?: Id;
    decided_at?: Timestamp;
  };
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "fulfillment".
 */
export interface Fulfillment {
  appointments?: {
    [k: string]: {
      kind: 'test_drive' | 'service' | 'appraisal' | 'delivery' | 'consultation';
      status: 'requested' | 'confirmed' | 'completed' | 'cancelled' | 'no_show';
      starts_at?: Timestamp;
      ends_at?: Timestamp;
      location_id?: Id;
      vehicle_id?: Id;
      party_ids?: Id[];
    };
  };
  delivery?: {
    method: 'dealer_pickup' | 'home_delivery' | 'fleet_depot';
    status: 'pending' | 'scheduled' | 'in_transit' | 'delivered';
    scheduled_for?: Timestamp;
    vehicle_id?: Id;
    recipient_party_id?: Id;
    address?: Address1;
  };
  work_orders?: {
    [k: string]: {
      status: 'open' | 'in_progress' | 'awaiting_parts' | 'completed' | 'invoiced' | 'closed';
      vehicle_id?: Id;
      opened_at?: Timestamp;
      /**
       * @maxItems 100
       */
      operation_codes?: string[];
    };
  };
  documents?: {
    [k: string]: {
      kind:
        | 'buyers_order'
        | 'retail_installment_contract'
        | 'lease_agreement'
        | 'odometer_statement'
        | 'title'
        | 'invoice'
        | 'repair_order'
        | 'privacy_notice';
      uri: string;
      media_type?: string;
      sha256?: string;
    };
  };
}
export interface Address1 {
  line1?: string;
  line2?: string;
  city?: string;
  region?: string;
  postal_code?: string;
  country: string;
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "event".
 */
export interface Event {
  event_id: Id;
  type: string;
  occurred_at: Timestamp;
  actor: AgentId;
  subject: string;
  data: {
    [k: string]: unknown;
  };
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "patchOperation".
 */
export interface PatchOperation {
  op: 'add' | 'remove' | 'replace' | 'test';
  path: string;
  value?: unknown;
}
/**
 * This interface was referenced by `EnvelopeSchema`'s JSON-Schema
 * via the `definition` "address".
 */
export interface Address2 {
  line1?: string;
  line2?: string;
  city?: string;
  region?: string;
  postal_code?: string;
  country: string;
}
