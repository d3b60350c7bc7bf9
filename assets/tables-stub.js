// [3.9.2] In place of BokehJS's tables bundle (bokeh-tables.min.js, 300 kB; not shipped). Panel's
// bundle needs its module "models/widgets/tables" at load, for TableColumn in its Tabulator; no
// page shows a table model (their readouts are HTML tables), so the module is this one: TableColumn
// that says so if ever made. BokehJS's own bundle had been evaluated on every first paint:
// 300 kB more to download and compile, and the first plot 20 ms later on loopback (sitebuild/
// static.py copy_static; an A/B of two builds, medians of 12 loads).
"use strict";
(function (root) {
  const Bokeh = root.Bokeh, bokeh = Bokeh && (Bokeh["3.9.2"] || Bokeh);
  if (!bokeh || typeof bokeh.register_plugin !== "function") return;  // BokehJS missing: the shell says so
  const id = "lab_tables_stub";
  bokeh.register_plugin({
    [id]: function (require, module, exports, esModule) {
      esModule();
      class TableColumn {
        constructor() {
          throw new Error("BokehJS's tables are not part of this site (assets/tables-stub.js): ship bokeh-tables.min.js to show one");
        }
      }
      exports.TableColumn = TableColumn;
    },
  }, id, { "models/widgets/tables/index": id }, {});
})(globalThis);
