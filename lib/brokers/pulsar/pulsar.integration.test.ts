// The shared broker contracts (read, redrive, discard and undo, repair) against the real local Pulsar
// (scripts/services.sh), letters dead-lettered by a real consumer's dead-letter policy.
import { runBrokerContract } from "@/lib/brokers/contract-suite/read";
import { runRedriveContract } from "@/lib/brokers/contract-suite/redrive";
import { runRemoveContract } from "@/lib/brokers/contract-suite/remove";
import { runRepairContract } from "@/lib/brokers/contract-suite/repair";
import { readContractFixtureWith, writeContractFixtureWith } from "@/lib/brokers/pulsar/contract-fixture";
import { MANAGED_HEADERS } from "@/lib/connections/managed-headers";

const setup = { allManagedHeaders: MANAGED_HEADERS };
const writeContractFixture = writeContractFixtureWith(setup);

runBrokerContract("pulsar", readContractFixtureWith(setup));
runRedriveContract("pulsar", writeContractFixture);
runRemoveContract("pulsar", writeContractFixture);
runRepairContract("pulsar", writeContractFixture);
