/**
 * The devices a FIT file names (engine/ingest/fit.ts): its creator and each device_info entry as
 * "Manufacturer Product", in the words a reader knows them by.
 */
import { getFitGarminProductDisplayName, getFitGarminProductName, type ParsedFit } from 'fit-file-parser';
import { fields, str, type Fields } from './fit-fields.ts';

/** Display names of FIT manufacturers that title-casing their profile name gets wrong. */
const MANUFACTURERS: Record<string, string> = {
  '4iiiis': '4iiii',
  bryton: 'Bryton',
  concept2: 'Concept2',
  coros: 'COROS',
  favero_electronics: 'Favero',
  polar_electro: 'Polar',
  saris: 'Saris',
  sigmasport: 'Sigma',
  sram: 'SRAM',
  srm: 'SRM',
  stages_cycling: 'Stages',
  the_sufferfest: 'The Sufferfest',
  wahoo_fitness: 'Wahoo',
  zwift_byte: 'Zwift',
};

/** Manufacturers whose `product` field holds a Garmin product id (FIT profile: the garmin_product sub-field). */
const GARMIN_PRODUCT_MAKERS = new Set(['garmin', 'dynastream', 'dynastream_oem', 'tacx']);

/** Garmin sensors whose profile names read badly. */
const GARMIN_PRODUCTS: Record<string, string> = {
  hrm1: 'HRM',
  hrm2ss: 'HRM2-SS',
  hrm3ss: 'HRM3-SS',
  hrm_run: 'HRM-Run',
  hrm_tri: 'HRM-Tri',
  hrm4_run: 'HRM4-Run',
  hrm_dual: 'HRM-Dual',
  hrm_pro: 'HRM-Pro',
  hrm_pro_plus: 'HRM-Pro Plus',
  hrm_fit: 'HRM-Fit',
  bsm: 'Speed Sensor',
  bcm: 'Cadence Sensor',
  gen3_bsm: 'Speed Sensor 2',
  gen3_bcm: 'Cadence Sensor 2',
  vector_ss: 'Vector S',
  vector_cp: 'Vector',
  swim: 'Swim',
};

function titleCase(name: string): string {
  return name
    .split('_')
    .filter((w) => w !== '')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');
}

function garminProductName(product: unknown): string | undefined {
  const id = typeof product === 'number' || typeof product === 'string' ? product : undefined;
  const name = getFitGarminProductName(id)?.replace(/_single_byte_product_id$/, '');
  if (!name) return undefined;
  return GARMIN_PRODUCTS[name] ?? getFitGarminProductDisplayName(id) ?? titleCase(name);
}

/**
 * "Manufacturer Product" for the file's creator (file_id) and each device_info entry, in file order,
 * without duplicates. The head unit's own sub-devices (device_info with source_type `local` other
 * than the creator: barometer, GPS chip, optical HR) are part of it and not listed; entries without
 * a known manufacturer are skipped; a product is named when the file or the FIT profile names it
 * (a bare product number means nothing to a reader and is left out).
 */
export function deviceNames(fit: ParsedFit): string[] {
  const names: string[] = [];
  const add = (m: Fields) => {
    const maker = m['manufacturer'];
    if (typeof maker !== 'string' || maker === '') return;
    const manufacturer = MANUFACTURERS[maker] ?? titleCase(maker);
    const productName = str(m, 'product_name');
    const product = GARMIN_PRODUCT_MAKERS.has(maker)
      ? (garminProductName(m['product']) ?? (productName && !/^\d+$/.test(productName) ? productName : undefined))
      : productName && !/^\d+$/.test(productName)
        ? productName
        : undefined;
    const name =
      product && !product.toLowerCase().startsWith(manufacturer.toLowerCase()) ? `${manufacturer} ${product}` : (product ?? manufacturer);
    if (!names.includes(name)) names.push(name);
  };
  for (const fileId of fit.file_ids ?? []) add(fields(fileId));
  for (const info of fit.device_infos ?? []) {
    const d = fields(info);
    if (d['source_type'] === 'local' && d['device_index'] !== 'creator' && d['device_index'] !== 0) continue;
    add(d);
  }
  return names;
}
